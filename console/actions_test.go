package console_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

func TestActionPauseAndResumeQueue(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	f.add("jobs", "alice", "a1")

	body := f.do(button(t, f.page("/queue?queue=jobs"), console.PauseQueue), nil)
	assert.Equal(t, `ok: Paused queue "jobs".`, flash(body))
	assert.Contains(t, body, `<h1>jobs <span class="badge s-paused">paused</span></h1>`)
	st, err := f.mem.Stats(ctx, "jobs")
	require.NoError(t, err)
	assert.True(t, st.Paused)
	ls, _, err := f.mem.Claim(ctx, "jobs", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	assert.Empty(t, ls, "a paused queue leases nothing")
	assert.Contains(t, row(t, f.page("/"), ">jobs<"), "s-paused", "the overview shows the pause")
	assert.Empty(t, flash(f.page("/")), "a flash shows once")

	body = f.do(button(t, body, console.ResumeQueue), nil)
	assert.Equal(t, `ok: Resumed queue "jobs".`, flash(body))
	assert.NotContains(t, body, "s-paused")
	assert.Equal(t, []console.Action{{Kind: console.PauseQueue, Queue: "jobs"}, {Kind: console.ResumeQueue, Queue: "jobs"}}, f.acts)
}

func TestActionPauseAndResumeKey(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1")
	body := f.do(button(t, f.page("/key?queue=jobs&key=alice"), console.PauseKey), nil)
	assert.Equal(t, `ok: Paused key "alice".`, flash(body))
	assert.Contains(t, body, `<span class="badge s-paused">paused</span>`)
	info, ok, err := f.mem.Key(context.Background(), "jobs", "alice")
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, info.Paused)

	body = f.do(button(t, body, console.ResumeKey), nil)
	assert.Equal(t, `ok: Resumed key "alice".`, flash(body))
	info, _, err = f.mem.Key(context.Background(), "jobs", "alice")
	require.NoError(t, err)
	assert.False(t, info.Paused)
	assert.Equal(t, []console.Action{{Kind: console.PauseKey, Queue: "jobs", Key: "alice"}, {Kind: console.ResumeKey, Queue: "jobs", Key: "alice"}}, f.acts)
}

func TestActionRetryNow(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Retry, After: time.Hour, Err: "busy"})
	body := f.do(button(t, f.page("/key?queue=jobs&key=alice"), console.RetryNow), nil)
	assert.Equal(t, `ok: Key "alice" is ready now.`, flash(body))
	assert.Contains(t, body, `class="badge s-ready"`)
	assert.False(t, hasButton(body, console.RetryNow), "a ready key has nothing to retry")
	assert.Equal(t, "alice", f.lease("jobs", "w").Key)
}

func TestActionRelease(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Hold, Err: "needs a human"})
	body := f.do(button(t, f.page("/key?queue=jobs&key=alice"), console.Release), nil)
	assert.Equal(t, `ok: Released key "alice".`, flash(body))
	assert.Contains(t, body, `class="badge s-ready"`)
	assert.Equal(t, []console.Action{{Kind: console.Release, Queue: "jobs", Key: "alice"}}, f.acts)
}

func TestActionDropKey(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1", "a2")
	href := button(t, f.page("/key?queue=jobs&key=alice"), console.DropKey)
	body := f.do(href, url.Values{"reason": {"poison message"}})
	assert.Equal(t, `ok: Moved 2 values of key "alice" to the dead letters.`, flash(body))
	assert.Contains(t, body, "The key holds no values and is not paused.")
	dead := f.page("/dead?queue=jobs")
	assert.Contains(t, row(t, dead, "poison message"), "a2")
	assert.Equal(t, []console.Action{{Kind: console.DropKey, Queue: "jobs", Key: "alice", Reason: "poison message"}}, f.acts)
}

func TestActionRedrive(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop, Err: "boom"})
	body := f.do(button(t, f.page("/dead?queue=jobs"), console.Redrive), nil)
	assert.Equal(t, "ok: Redrove dead letter 1.", flash(body))
	assert.Contains(t, body, "No dead letters.")
	vals, err := f.mem.Values(context.Background(), "jobs", "alice", 10)
	require.NoError(t, err)
	require.Len(t, vals, 1)
	assert.Equal(t, "a1", string(vals[0].Value))
	assert.Equal(t, []console.Action{{Kind: console.Redrive, Queue: "jobs", DeadLetter: 1}}, f.acts)

	// The same form again: the dead letter is gone.
	again := f.do(button(t, f.page("/dead?queue=jobs&after=0"), console.Purge), url.Values{"older": {"1h"}})
	assert.Equal(t, "ok: Purged 0 dead letters older than 1h.", flash(again))
}

func TestActionPurge(t *testing.T) {
	f := setup(t)
	for _, k := range []string{"old-1", "old-2"} {
		f.add("jobs", k, "v")
		f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop, Err: "old"})
	}
	f.clk.Add(8 * 24 * time.Hour)
	f.add("jobs", "new", "v")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop, Err: "new"})
	f.clk.Add(time.Hour)

	confirm := f.page(button(t, f.page("/dead?queue=jobs"), console.Purge))
	assert.Contains(t, confirm, `name="older" value="7d"`, "the form proposes a week")
	body := f.do(button(t, f.page("/dead?queue=jobs"), console.Purge), url.Values{"older": {"7d"}})
	assert.Equal(t, "ok: Purged 2 dead letters older than 7d.", flash(body))
	assert.NotContains(t, body, "old-1")
	assert.Contains(t, body, ">new<")
	assert.Equal(t, []console.Action{{Kind: console.Purge, Queue: "jobs", Older: 7 * 24 * time.Hour}}, f.acts)

	resp := f.post(f.confirmation(button(t, body, console.Purge)), url.Values{"older": {"soon"}}, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestAuthorizeRefuses(t *testing.T) {
	f := setup(t, func(f *fixture, cfg *console.Config) {
		cfg.Authorize = func(r *http.Request, a console.Action) error {
			f.acts = append(f.acts, a)
			if r.Header.Get("X-User") != "admin" {
				return errors.New("only admins may " + string(a.Kind))
			}
			return nil
		}
	})
	f.add("jobs", "alice", "a1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Hold})
	form := f.confirmation(button(t, f.page("/key?queue=jobs&key=alice"), console.Release))

	resp := f.post(form, nil, nil)
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, string(b), "Not allowed: only admins may release")
	info, _, err := f.mem.Key(context.Background(), "jobs", "alice")
	require.NoError(t, err)
	assert.Equal(t, store.Held, info.State, "a refused action changes nothing")

	resp = f.post(form, nil, http.Header{"X-User": {"admin"}})
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	info, _, err = f.mem.Key(context.Background(), "jobs", "alice")
	require.NoError(t, err)
	assert.Equal(t, store.Ready, info.State)
	assert.Len(t, f.acts, 2, "the authorizer saw both")
}

func TestReadOnly(t *testing.T) {
	f := setup(t, readOnly)
	f.add("jobs", "alice", "a1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop})
	f.add("jobs", "bob", "b1")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Hold})
	for _, path := range []string{"/", "/queue?queue=jobs", "/key?queue=jobs&key=bob", "/dead?queue=jobs"} {
		body := f.page(path)
		assert.NotContains(t, body, "data-action=", "%s shows no action", path)
		assert.Contains(t, body, `<span class="mode"`, "%s says it is read-only", path)
	}
	status, body := f.get("/confirm?do=release&queue=jobs&key=bob")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, body, "read-only")

	// A POST with a valid token, made as another console would make it.
	other := setup(t)
	form := other.confirmation("/pacer/confirm?do=release&queue=jobs&key=bob")
	form.action = f.url("/act?do=release&queue=jobs&key=bob")
	ck := other.client.Jar.Cookies(mustURL(t, other.url("/")))
	f.client.Jar.SetCookies(mustURL(t, f.url("/")), ck)
	resp := f.post(form, nil, nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	info, _, err := f.mem.Key(context.Background(), "jobs", "bob")
	require.NoError(t, err)
	assert.Equal(t, store.Held, info.State)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func TestCrossSiteRefused(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", "a1")
	form := f.confirmation(button(t, f.page("/queue?queue=jobs"), console.PauseQueue))
	for name, h := range map[string]http.Header{
		"Sec-Fetch-Site cross-site": {"Sec-Fetch-Site": {"cross-site"}},
		"Origin of another site":    {"Sec-Fetch-Site": nil, "Origin": {"https://evil.example"}},
	} {
		t.Run(name, func(t *testing.T) {
			resp := f.post(form, nil, h)
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
			assert.Contains(t, string(b), "another site")
		})
	}
	t.Run("no token", func(t *testing.T) {
		resp := f.post(confirmForm{action: form.action}, nil, nil)
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, string(b), "token does not match")
	})
	t.Run("a token of another cookie", func(t *testing.T) {
		stranger := setup(t)
		forged := stranger.confirmation("/pacer/confirm?do=pause-queue&queue=jobs")
		resp := f.post(confirmForm{action: form.action, token: forged.token}, nil, nil)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	})
	t.Run("no cookie", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, form.action, strings.NewReader(url.Values{"csrf": {form.token}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, string(b), "cookie is missing")
	})
	st, err := f.mem.Stats(context.Background(), "jobs")
	require.NoError(t, err)
	assert.False(t, st.Paused, "no refused POST paused the queue")
	assert.Empty(t, f.acts, "the authorizer never saw a refused POST")

	resp := f.post(form, nil, nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "the same form from the same site")
}

func TestCSRFKeysAcrossReplicas(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	a := setup(t, func(_ *fixture, cfg *console.Config) { cfg.CSRFKey = key })
	b := setup(t, func(_ *fixture, cfg *console.Config) { cfg.CSRFKey = key; cfg.Store = a.mem })
	a.add("jobs", "alice", "a1")
	form := a.confirmation("/pacer/confirm?do=pause-queue&queue=jobs")
	form.action = b.url("/act?do=pause-queue&queue=jobs")
	b.client.Jar.SetCookies(mustURL(t, b.url("/")), a.client.Jar.Cookies(mustURL(t, a.url("/"))))
	resp := b.post(form, nil, nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "a replica with the same key takes the other's form")
}
