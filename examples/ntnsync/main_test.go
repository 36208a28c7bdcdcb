package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// inProcess exposes an app's webhook without a listener; stopping intake
// is the webhook's own stop.
func inProcess(a *app) (poster, func(context.Context) error, error) {
	hc := &http.Client{Transport: hookhttp.InProcess{Handler: routes(a)}}
	return hookhttp.PostJSON(hc, "http://ntnsync.invalid/webhook"), func(context.Context) error { a.hook.stop(); return nil }, nil
}

func TestDemo(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				fake := newDemoNotion(30*time.Millisecond, 4, time.Now())
				cfg := appConfig{
					QueueDir: filepath.Join(dir, "queue"), OutDir: filepath.Join(dir, "pages"),
					APIURL: "http://notion.invalid", Secret: []byte("s3cret"),
					Rate: 3, Burst: 3, Workers: workers,
					Backoff: backoff(200*time.Millisecond, 2*time.Second),
					Base:    hookhttp.InProcess{Handler: fake}, Logger: discard(),
				}
				d := &demo{cfg: cfg, fake: fake, expose: inProcess, gap: 20 * time.Millisecond}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
				defer cancel()
				rep, err := d.run(ctx)
				require.NoError(t, err)
				var out bytes.Buffer
				rep.print(&out)
				t.Log("\n" + out.String())
				for _, c := range rep.checks {
					require.True(t, c.ok, "check failed: %s\n%s", c.name, out.String())
				}
				require.Equal(t, int64(len(crashPages)+burstRounds*len(demoPages)), rep.accepted)
				require.Equal(t, int64(1), rep.ignored)
				require.Less(t, rep.fetches, int(rep.accepted))
				require.Equal(t, rep.failed, rep.worker.Retries)
				require.Equal(t, rep.fetches, rep.worker.Fetches)
				require.Zero(t, rep.worker.Dropped)
			})
			entries, err := os.ReadDir(filepath.Join(dir, "queue"))
			require.NoError(t, err)
			require.Empty(t, entries, "no item and no temporary file left in the queue")
		})
	}
}

func TestQueueCoalescesAndKeepsNewerChanges(t *testing.T) {
	q, err := openQueue(t.TempDir())
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	require.NoError(t, q.put("b", t0.Add(time.Second)))
	require.NoError(t, q.put("a", t0.Add(2*time.Second)))
	require.NoError(t, q.put("b", t0.Add(3*time.Second)))
	items, err := q.list()
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, "b", items[0].PageID, "oldest first change first")
	require.Equal(t, 2, items[0].Updates)
	require.Equal(t, t0.Add(time.Second), items[0].First)
	require.Equal(t, t0.Add(3*time.Second), items[0].Last)

	// A change that arrives while b is synced keeps b queued.
	require.NoError(t, q.put("b", t0.Add(4*time.Second)))
	removed, err := q.ack(items[0])
	require.NoError(t, err)
	require.False(t, removed)
	removed, err = q.ack(items[1])
	require.NoError(t, err)
	require.True(t, removed)

	// Reopening continues the sequence, so an old ack never removes a new item.
	q2, err := openQueue(q.dir)
	require.NoError(t, err)
	items, err = q2.list()
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.NoError(t, q2.put("c", t0))
	c, err := q2.read("c")
	require.NoError(t, err)
	require.Greater(t, c.Seq, items[0].Seq)

	require.Error(t, q.put("../etc/passwd", t0), "page ids are file names: only safe ones")
}

func TestQueueIgnoresTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	// A write cut short by a crash leaves a temporary file behind.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".tmp-x.json-123"), []byte("{"), 0o644))
	q, err := openQueue(dir)
	require.NoError(t, err)
	n, err := q.len()
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestWakeupCoalescesAndIsNeverLost(t *testing.T) {
	w := newWakeup()
	for range 5 {
		w.notify() // never blocks
	}
	<-w
	select {
	case <-w:
		t.Fatal("five notifies before a receive must leave one wake-up")
	default:
	}
	w.notify()
	select {
	case <-w:
	default:
		t.Fatal("a notify after a receive must leave a wake-up")
	}
}

func TestWebhook(t *testing.T) {
	secret := []byte("s3cret")
	page := []byte(`{"type":"page.content_updated","entity":{"id":"p1","type":"page"}}`)
	db := []byte(`{"type":"database.schema_updated","entity":{"id":"d1","type":"database"}}`)
	badID := []byte(`{"type":"page.created","entity":{"id":"../x","type":"page"}}`)
	cases := []struct {
		name    string
		body    []byte
		sig     string
		stopped bool
		status  int
		queued  bool
	}{
		{name: "page change", body: page, sig: hookhttp.Sign(secret, page), status: 200, queued: true},
		{name: "not a page", body: db, sig: hookhttp.Sign(secret, db), status: 200},
		{name: "handshake", body: []byte(`{"verification_token":"secret_abc"}`), status: 200},
		{name: "bad signature", body: page, sig: hookhttp.Sign([]byte("x"), page), status: 401},
		{name: "bad JSON", body: []byte("{"), status: 400},
		{name: "bad page id", body: badID, sig: hookhttp.Sign(secret, badID), status: 400},
		{name: "too large", body: bytes.Repeat([]byte(" "), maxBody+1), status: 413},
		{name: "stopped", body: page, sig: hookhttp.Sign(secret, page), stopped: true, status: 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := openQueue(t.TempDir())
			require.NoError(t, err)
			h := &webhook{secret: secret, q: q, wake: newWakeup(), log: discard()}
			if c.stopped {
				h.stop()
			}
			req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(c.body))
			if c.sig != "" {
				req.Header.Set(hookhttp.SignatureHeader, c.sig)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, c.status, rec.Code, rec.Body.String())
			n, err := q.len()
			require.NoError(t, err)
			if c.queued {
				require.Equal(t, 1, n, "the change is on disk before the answer")
				require.Len(t, h.wake, 1, "the worker is woken")
			} else {
				require.Zero(t, n)
				require.Empty(t, h.wake)
			}
		})
	}
}

func TestWorkerRetriesWithBackoffAndKeepsFailuresQueued(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		q, err := openQueue(filepath.Join(dir, "queue"))
		require.NoError(t, err)
		st, err := openStore(filepath.Join(dir, "pages"))
		require.NoError(t, err)
		fails := 3
		var at []time.Time
		w := &worker{q: q, st: st, wake: newWakeup(), log: discard(), retry: make(map[string]retryState),
			backoff: backoff(time.Second, 10*time.Second),
			fetch: func(ctx context.Context, id string) (page, error) {
				at = append(at, time.Now())
				if fails > 0 {
					fails--
					return page{}, &statusError{Status: 502}
				}
				return page{ID: id, Title: "T", Version: 7}, nil
			}}
		w.backoff.Jitter = 0
		require.NoError(t, q.put("p1", time.Now()))
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		require.NoError(t, w.drain(ctx))
		require.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second},
			[]time.Duration{at[0].Sub(start), at[1].Sub(start), at[2].Sub(start), at[3].Sub(start)}, "waits of 1 s, 2 s, 4 s")
		c := w.snapshot()
		require.Equal(t, 3, c.Retries)
		require.Equal(t, 1, c.Synced)
		md, err := os.ReadFile(filepath.Join(dir, "pages", "p1.md"))
		require.NoError(t, err)
		require.Contains(t, string(md), "version: 7")
	})
}

func TestWorkerDropsPermanentFailures(t *testing.T) {
	dir := t.TempDir()
	q, err := openQueue(filepath.Join(dir, "queue"))
	require.NoError(t, err)
	st, err := openStore(filepath.Join(dir, "pages"))
	require.NoError(t, err)
	w := &worker{q: q, st: st, wake: newWakeup(), log: discard(), retry: make(map[string]retryState),
		fetch: func(context.Context, string) (page, error) { return page{}, &statusError{Status: 404} }}
	require.NoError(t, q.put("gone", time.Now()))
	require.NoError(t, w.drain(t.Context()))
	require.Equal(t, 1, w.snapshot().Dropped)
}

func TestStoreKeepsNewerVersionAndCommits(t *testing.T) {
	dir := t.TempDir()
	st, err := openStore(dir)
	require.NoError(t, err)
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	wrote, err := st.write(page{ID: "p", Version: 3}, []byte("v3"), now)
	require.NoError(t, err)
	require.True(t, wrote)
	wrote, err = st.write(page{ID: "p", Version: 2}, []byte("v2"), now)
	require.NoError(t, err)
	require.False(t, wrote, "an older fetch never overwrites a newer file")
	wrote, err = st.write(page{ID: "p", Version: 3}, []byte("v3"), now)
	require.NoError(t, err)
	require.False(t, wrote, "the same version is not written twice")
	m, err := st.commit(now)
	require.NoError(t, err)
	require.Equal(t, 1, m.Commits)

	st2, err := openStore(dir)
	require.NoError(t, err)
	m, err = st2.commit(now)
	require.NoError(t, err)
	require.Equal(t, 2, m.Commits, "the manifest survives a restart")
	require.Equal(t, 3, m.Pages["p"].Version)
	got, err := os.ReadFile(filepath.Join(dir, "p.md"))
	require.NoError(t, err)
	require.Equal(t, "v3", string(got))
}

func TestMarkdown(t *testing.T) {
	p := page{ID: "p1", Title: "Plan", Version: 2, LastEdited: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC), Blocks: []block{
		{Type: "heading_1", Text: "Goals"},
		{Type: "paragraph", Text: "Ship it."},
		{Type: "numbered_list_item", Text: "one"},
		{Type: "numbered_list_item", Text: "two"},
		{Type: "to_do", Text: "test", Checked: true},
		{Type: "to_do", Text: "release"},
		{Type: "quote", Text: "a\nb"},
		{Type: "code", Language: "go", Text: "x := 1"},
		{Type: "divider"},
	}}
	want := strings.Join([]string{
		"---", "id: p1", `title: "Plan"`, "version: 2", "last_edited: 2026-11-20T09:30:00Z", "---", "",
		"# Plan", "",
		"## Goals", "",
		"Ship it.", "",
		"1. one", "2. two", "",
		"- [x] test", "- [ ] release", "",
		"> a", "> b", "",
		"```go", "x := 1", "```", "",
		"---", "",
	}, "\n")
	require.Equal(t, want, string(markdown(p)))
}
