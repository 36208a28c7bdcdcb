package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// row returns the table row of the page that contains s.
func row(t *testing.T, body, s string) string {
	t.Helper()
	for _, r := range strings.Split(body, "<tr>") {
		if strings.Contains(r, s) {
			return r
		}
	}
	t.Fatalf("no row holds %q in:\n%s", s, body)
	return ""
}

// cells returns the texts of a row's cells, tags removed.
func cells(r string) []string {
	var out []string
	tags := regexp.MustCompile(`<[^>]*>`)
	for _, c := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(r, -1) {
		out = append(out, strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(c[1], ""))))
	}
	return out
}

func TestOverviewListsQueuesWithCounts(t *testing.T) {
	f := setup(t)
	f.add("emails", "alice", "a1", "a2")
	f.add("emails", "bob", "b1")
	f.add("sms", "carol", "c1")
	f.clk.Add(3 * time.Minute)
	l := f.lease("sms", "worker-1")
	f.finish(l, store.Outcome{Kind: store.Drop, Err: "bounced"})
	f.add("sms", "dave", "d1")

	shell := f.page("/")
	assert.NotContains(t, shell, ">emails<", "the page is sent before the counts are read")
	assert.Contains(t, shell, `<tbody id="queue-rows" aria-busy="true"><tr><td colspan="11" class="empty loading">Loading counts…</td></tr>`)
	assert.Contains(t, shell, `<noscript><meta http-equiv="refresh" content="0; url=?counts=inline"></noscript>`, "a browser without scripts asks for the counts inline")

	body := f.page("/?counts=inline")
	assert.Contains(t, body, `<noscript><meta http-equiv="refresh" content="10"></noscript>`, "and refreshes them")
	emails := cells(row(t, body, ">emails<"))
	// Queue, keys, values, ready, leased, retrying, held, debouncing, paused keys, dead, oldest
	assert.Equal(t, []string{"emails", "2", "3", "2", "0", "0", "0", "0", "0", "0", "3m ago"}, emails)
	sms := cells(row(t, body, ">sms<"))
	assert.Equal(t, []string{"sms", "1", "1", "1", "0", "0", "0", "0", "0", "1", "now"}, sms)
	assert.Contains(t, body, `title="2026-03-14 09:26:53.000 UTC"`, "the absolute time on hover")
	assert.Less(t, strings.Index(body, ">emails<"), strings.Index(body, ">sms<"), "ordered by name")

	rows := f.page("/queues")
	assert.NotContains(t, rows, "<html", "the live fragment holds rows alone")
	assert.Equal(t, emails, cells(row(t, rows, ">emails<")))
	assert.Contains(t, shell, `data-src="/pacer/queues"`, "the page loads and refreshes its rows from the fragment")
}

func TestOverviewEmpty(t *testing.T) {
	f := setup(t)
	assert.Contains(t, f.page("/queues"), "No queue holds values or dead letters.")
}

func TestMountPrefix(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []func(*fixture, *console.Config)
		prefix string
	}{
		{"under /pacer/", nil, "/pacer/"},
		{"at the root", []func(*fixture, *console.Config){atRoot}, "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, tc.opts...)
			f.add("emails", "alice", "a1")
			for _, path := range []string{"/", "/?counts=inline", "/queues", "/queue?queue=emails", "/counts?queue=emails"} {
				for _, m := range regexp.MustCompile(`\s(?:href|src|action|data-src)="([^"]*)"`).FindAllStringSubmatch(f.page(path), -1) {
					assert.True(t, strings.HasPrefix(m[1], tc.prefix), "link %q of %s keeps the prefix %q", m[1], path, tc.prefix)
				}
			}
			body := f.page("/?counts=inline")
			assert.Contains(t, body, `href="`+tc.prefix+`queue?queue=emails"`)
			assert.Contains(t, body, tc.prefix+`static/style.css?v=`)

			status, css := f.get("/static/style.css")
			require.Equal(t, http.StatusOK, status)
			assert.Contains(t, css, ".badge")
			key := f.page(html.UnescapeString(regexp.MustCompile(`href="([^"]*key\?[^"]*)"`).FindStringSubmatch(f.page("/queue?queue=emails"))[1]))
			assert.Contains(t, key, "a1", "the key's link leads to its page")
		})
	}
}

func TestMountPrefixWithoutSlashRedirects(t *testing.T) {
	h, err := console.New(console.Config{Store: store.NewMemory(store.MemoryConfig{})})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	http.StripPrefix("/pacer", h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pacer", nil))
	assert.Equal(t, http.StatusMovedPermanently, rec.Code)
	assert.Equal(t, "/pacer/", rec.Header().Get("Location"))

	rec = httptest.NewRecorder()
	http.StripPrefix("/pacer/", h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pacer/queue?queue=q", nil))
	assert.Equal(t, http.StatusOK, rec.Code, "a prefix stripped with its slash")
	assert.Contains(t, rec.Body.String(), `href="/pacer/"`)
}

func TestQueuePageFiltersByState(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	for i := range 6 {
		f.add("jobs", fmt.Sprintf("k%d", i), "v")
	}
	// k0 held, k1 retrying, k2 leased, the others ready.
	for i, o := range []store.Outcome{{Kind: store.Hold, Err: "needs a human"}, {Kind: store.Retry, After: time.Hour, Err: "503 from upstream"}} {
		l := f.lease("jobs", "w")
		require.Equal(t, fmt.Sprintf("k%d", i), l.Key)
		f.finish(l, o)
	}
	require.Equal(t, "k2", f.lease("jobs", "worker-7").Key)
	require.NoError(t, f.mem.Add(ctx, "jobs", "z-burst", [][]byte{[]byte("v")}, store.AddParams{Wait: time.Minute}))

	body := f.page("/queue?queue=jobs")
	assert.Equal(t, []string{"k0", "held", "1", "now", "now", "—", "1", "—", "needs a human"}, cells(row(t, body, ">k0<")))
	assert.Equal(t, []string{"k1", "retrying", "1", "now", "—", "in 1h", "1", "—", "503 from upstream"}, cells(row(t, body, ">k1<")))
	assert.Equal(t, []string{"k2", "leased", "1", "now", "now", "in 1m", "1", "worker-7", ""}, cells(row(t, body, ">k2<")))
	assert.Contains(t, row(t, body, ">z-burst<"), `class="badge s-debouncing"`)
	assert.NotContains(t, body, `<dt>Held</dt><dd class="c-held">1</dd>`, "the counts load after the page")
	assert.Contains(t, f.page("/counts?queue=jobs"), `<dt>Held</dt><dd class="c-held">1</dd>`)

	held := f.page("/queue?queue=jobs&state=held")
	assert.Contains(t, held, ">k0<")
	for _, k := range []string{">k1<", ">k2<", ">k3<", ">z-burst<"} {
		assert.NotContains(t, held, k)
	}
	assert.Contains(t, held, `<option value="held" selected>`)

	ready := f.page("/queue?queue=jobs&state=ready")
	assert.Equal(t, 3, strings.Count(ready, `class="badge s-ready"`), "k3, k4, k5")

	status, bad := f.get("/queue?queue=jobs&state=sleeping")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, bad, "sleeping")
}

func TestQueuePageSearchesByPrefix(t *testing.T) {
	f := setup(t)
	for _, k := range []string{"tenant-1/a", "tenant-1/b", "tenant-2/a", "other"} {
		f.add("jobs", k, "v")
	}
	body := f.page("/queue?queue=jobs&prefix=tenant-1%2F")
	assert.Contains(t, body, ">tenant-1/a<")
	assert.Contains(t, body, ">tenant-1/b<")
	assert.NotContains(t, body, ">tenant-2/a<")
	assert.NotContains(t, body, ">other<")
	assert.Contains(t, body, `value="tenant-1/"`, "the search box keeps the prefix")
	assert.Contains(t, f.page("/queue?queue=jobs&prefix=nobody"), "No key passes the filter.")
}

func TestQueuePagePages(t *testing.T) {
	f := setup(t)
	const n = 123
	for i := range n {
		f.add("jobs", fmt.Sprintf("key-%03d", i), "v")
	}
	keyLink := regexp.MustCompile(`<span class="k">(key-\d{3})</span>`)
	next := regexp.MustCompile(`href="([^"]*)" rel="next"`)
	seen := map[string]int{}
	path, pages := "/queue?queue=jobs", 0
	for path != "" {
		body := f.page(path)
		pages++
		ks := keyLink.FindAllStringSubmatch(body, -1)
		require.LessOrEqual(t, len(ks), 50)
		for _, k := range ks {
			seen[k[1]]++
		}
		if pages > 1 {
			assert.Contains(t, body, "« First page")
		}
		path = ""
		if m := next.FindStringSubmatch(body); m != nil {
			path = html.UnescapeString(m[1])
		}
		require.Less(t, pages, 10, "the pages end")
	}
	assert.Equal(t, 3, pages)
	assert.Len(t, seen, n)
	for k, c := range seen {
		assert.Equal(t, 1, c, "%s shown once", k)
	}
}

func TestQueuePageKeepsFilterAcrossPages(t *testing.T) {
	f := setup(t)
	for i := range 60 {
		f.add("jobs", fmt.Sprintf("a-%02d", i), "v")
		f.add("jobs", fmt.Sprintf("b-%02d", i), "v")
	}
	body := f.page("/queue?queue=jobs&prefix=b-&limit=25")
	m := regexp.MustCompile(`href="([^"]*)" rel="next"`).FindStringSubmatch(body)
	require.NotNil(t, m)
	next := html.UnescapeString(m[1])
	assert.Contains(t, next, "prefix=b-")
	assert.Contains(t, next, "limit=25")
	page2 := f.page(next)
	assert.Contains(t, page2, ">b-25<")
	assert.NotContains(t, page2, ">a-")
}

func TestKeyPage(t *testing.T) {
	f := setup(t)
	f.add("jobs", "order-42", `{"id":42,"items":["tea","cake"]}`, "plain text", "\x00\x01\xfe binary")
	f.clk.Add(90 * time.Second)
	l := f.lease("jobs", "worker-3")
	f.finish(l, store.Outcome{Kind: store.Retry, After: 10 * time.Minute, Err: "payment service: 503"})
	f.clk.Add(time.Second)

	body := f.page("/key?queue=jobs&key=order-42")
	assert.Contains(t, body, `<span class="k">order-42</span>`)
	assert.Contains(t, body, `class="badge s-retrying"`)
	assert.Contains(t, body, "payment service: 503")
	assert.Contains(t, body, "<dt>Attempt</dt><dd>1</dd>")
	assert.Contains(t, body, "<dt>Fence</dt>")
	assert.Contains(t, body, "<dt>Until</dt><dd>"+`<time datetime="2026-03-14T09:38:23Z" title="2026-03-14 09:38:23.000 UTC">in 9m</time>`)
	assert.Contains(t, body, "<dt>Oldest value</dt><dd>"+`<time datetime="2026-03-14T09:26:53Z" title="2026-03-14 09:26:53.000 UTC">1m ago</time>`)
	assert.Contains(t, body, "json · 32 B")
	assert.Contains(t, body, "{\n  &#34;id&#34;: 42,", "JSON shown indented")
	assert.Contains(t, body, "text · 10 B")
	assert.Contains(t, body, "<pre>plain text</pre>")
	assert.Contains(t, body, "hex · 10 B")
	assert.Contains(t, body, "00 01 fe 20 62 69 6e 61", "binary shown in hex")
	assert.Regexp(t, `<section class="explain" aria-label="Explanation">\s*key &#34;order-42&#34; is retrying [^<]*payment service: 503`, body, "pacer.ExplainStored's sentence")
	assert.True(t, hasButton(body, "retry-now"))
	assert.True(t, hasButton(body, "drop-key"))
	assert.False(t, hasButton(body, "release"), "only a held key is released")
}

// A ready key of a queue with tenants shows the keys ahead of it in its
// tenant and the tenants ahead of its tenant, in its facts and in the
// explanation's sentence.
func TestKeyPageTenantsAhead(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	for _, k := range []struct{ key, tenant string }{{"a-1", "acme"}, {"b-1", "beta"}, {"c-1", "core"}, {"c-2", "core"}} {
		require.NoError(t, f.mem.Add(ctx, "jobs", k.key, [][]byte{[]byte("v")}, store.AddParams{Tenant: k.tenant}))
	}
	body := f.page("/key?queue=jobs&key=c-2")
	assert.Contains(t, body, `<dt>Keys ahead</dt><dd>1 <span class="tag">of its tenant</span></dd>`)
	assert.Contains(t, body, "<dt>Tenants ahead</dt><dd>2</dd>")
	assert.Regexp(t, `key &#34;c-2&#34; is ready since [^<]* with 1 key ahead of it in its tenant, its tenant&#39;s turn after 2 others\s*</section>`, body)

	first := f.page("/key?queue=jobs&key=a-1")
	assert.NotContains(t, first, "Tenants ahead", "the first tenant in turn has none ahead")
	assert.Contains(t, first, "next in line")
}

// TestKeyPageWaitingForToken: a key that a Claim deferred for its
// KeyRate token says so in its facts and in the explanation's sentence.
func TestKeyPageWaitingForToken(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	f.add("jobs", "k", "1", "2")
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute, KeyRate: store.KeyRate{Interval: time.Hour}}
	ls, _, err := f.mem.Claim(ctx, "jobs", p)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	f.finish(ls[0], store.Outcome{Kind: store.Ack})
	ls, _, err = f.mem.Claim(ctx, "jobs", p)
	require.NoError(t, err)
	require.Empty(t, ls, "no token for the key's second batch")

	body := f.page("/key?queue=jobs&key=k")
	assert.Regexp(t, `<dt>Until</dt><dd>[^\n]*<span class="tag">key's token</span></dd>`, body)
	assert.Regexp(t, `key &#34;k&#34; is waiting for its key&#39;s token until [^<,]*\s*</section>`, body)
}

func TestKeyPageLeaseAndValueLimit(t *testing.T) {
	f := setup(t)
	vals := make([]string, 25)
	for i := range vals {
		vals[i] = fmt.Sprintf("value %d", i)
	}
	f.add("jobs", "big", vals...)
	l := f.lease("jobs", "host-a/pid-7")

	body := f.page("/key?queue=jobs&key=big")
	assert.Contains(t, body, `<dd class="mono">host-a/pid-7</dd>`)
	assert.Contains(t, body, fmt.Sprintf(`<dt>Fence</dt><dd class="mono">%d</dd>`, l.Fence))
	assert.Contains(t, body, "first 20 of 25")
	assert.Contains(t, body, "value 19<")
	assert.NotContains(t, body, "value 20<")
	assert.Contains(t, body, "… and 5 more not shown.")
}

func TestKeyPageOfAnEmptyKey(t *testing.T) {
	f := setup(t)
	body := f.page("/key?queue=jobs&key=nobody")
	assert.Contains(t, body, "The key holds no values and is not paused.")
	status, _ := f.get("/key?queue=jobs")
	assert.Equal(t, http.StatusBadRequest, status)
}

func TestDeadLettersPage(t *testing.T) {
	f := setup(t)
	f.add("jobs", "alice", `{"to":"alice@example.com"}`, "second", "third", "fourth")
	f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop, Err: "550 mailbox unavailable"})
	f.clk.Add(2 * time.Hour)

	body := f.page("/dead?queue=jobs")
	r := row(t, body, "550 mailbox unavailable")
	assert.Contains(t, r, `<span class="k">alice</span>`)
	assert.Contains(t, r, "2h ago")
	assert.Contains(t, r, "&#34;to&#34;: &#34;alice@example.com&#34;")
	assert.Contains(t, r, "+ 1 more", "three values shown of four")
	assert.True(t, hasButton(r, "redrive"))
	assert.Contains(t, body, `data-action="purge"`)
}

func TestDeadLettersPages(t *testing.T) {
	f := setup(t)
	for i := range 60 {
		f.add("jobs", fmt.Sprintf("k%02d", i), "v")
		f.finish(f.lease("jobs", "w"), store.Outcome{Kind: store.Drop, Err: fmt.Sprintf("err-%02d", i)})
	}
	body := f.page("/dead?queue=jobs")
	assert.Equal(t, 50, strings.Count(body, "err-"))
	m := regexp.MustCompile(`href="([^"]*)" rel="next"`).FindStringSubmatch(body)
	require.NotNil(t, m)
	page2 := f.page(html.UnescapeString(m[1]))
	assert.Equal(t, 10, strings.Count(page2, "err-"))
	assert.Contains(t, page2, "err-59")
	assert.NotContains(t, page2, "err-49")
}

func TestUnknownPageAndMethod(t *testing.T) {
	f := setup(t)
	status, body := f.get("/nowhere")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, "No such page.")

	resp, err := f.client.Post(f.url("/queue?queue=x"), "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	resp, err = f.client.Get(f.url("/act"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestSecurityHeaders(t *testing.T) {
	f := setup(t)
	resp, err := f.client.Get(f.url("/"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
}
