package console_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// epoch is the fake clock's start.
var epoch = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// fixture is a console over a Memory on a mock clock, mounted under
// /pacer/ of a test server, with a client that keeps cookies.
type fixture struct {
	t      *testing.T
	clk    *clock.Mock
	mem    *store.Memory
	srv    *httptest.Server
	client *http.Client
	prefix string // the mount prefix, "" at the root
	acts   []console.Action
}

// setup starts a fixture. cfg's Store and Now are set by it; an
// Authorize of nil is replaced by one that records and allows, unless
// readOnly.
func setup(t *testing.T, opts ...func(*fixture, *console.Config)) *fixture {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	f := &fixture{t: t, clk: clk, mem: store.NewMemory(store.MemoryConfig{Clock: clk}), prefix: "/pacer"}
	cfg := console.Config{Store: f.mem, Now: clk.Now}
	cfg.Authorize = func(r *http.Request, a console.Action) error {
		f.acts = append(f.acts, a)
		return nil
	}
	for _, o := range opts {
		o(f, &cfg)
	}
	h, err := console.New(cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	if f.prefix == "" {
		mux.Handle("/", h)
	} else {
		mux.Handle(f.prefix+"/", http.StripPrefix(f.prefix, h))
	}
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	f.client = &http.Client{Jar: jar, Timeout: 10 * time.Second}
	t.Cleanup(f.client.CloseIdleConnections)
	return f
}

// readOnly makes the console read-only.
func readOnly(_ *fixture, cfg *console.Config) { cfg.Authorize = nil }

// atRoot mounts the console at /.
func atRoot(f *fixture, _ *console.Config) { f.prefix = "" }

// add adds values to key of queue, ready at once.
func (f *fixture) add(queue, key string, vals ...string) {
	f.t.Helper()
	bs := make([][]byte, len(vals))
	for i, v := range vals {
		bs[i] = []byte(v)
	}
	require.NoError(f.t, f.mem.Add(context.Background(), queue, key, bs, store.AddParams{}))
}

// lease claims the next ready key of queue for holder.
func (f *fixture) lease(queue, holder string) store.Lease {
	f.t.Helper()
	ls, _, err := f.mem.Claim(context.Background(), queue, store.ClaimParams{Keys: 1, TTL: time.Minute, Holder: holder})
	require.NoError(f.t, err)
	require.Len(f.t, ls, 1)
	return ls[0]
}

// finish ends l as o says.
func (f *fixture) finish(l store.Lease, o store.Outcome) {
	f.t.Helper()
	_, err := f.mem.Finish(context.Background(), l, o)
	require.NoError(f.t, err)
}

// url returns the address of a path below the mount prefix.
func (f *fixture) url(path string) string {
	return f.srv.URL + f.prefix + "/" + strings.TrimPrefix(path, "/")
}

// get reads a page below the prefix (or, when path is absolute and starts
// with the prefix, that address) and returns its status and body.
func (f *fixture) get(path string) (int, string) {
	f.t.Helper()
	u := f.url(path)
	if strings.HasPrefix(path, f.prefix+"/") && f.prefix != "" || strings.HasPrefix(path, "http") {
		u = f.abs(path)
	}
	resp, err := f.client.Get(u)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp.StatusCode, string(b)
}

// page reads a page that must answer 200.
func (f *fixture) page(path string) string {
	f.t.Helper()
	status, body := f.get(path)
	require.Equal(f.t, http.StatusOK, status, "GET %s: %s", path, body)
	return body
}

// abs returns the address of a link as the page wrote it.
func (f *fixture) abs(href string) string {
	href = html.UnescapeString(href)
	if strings.HasPrefix(href, "http") {
		return href
	}
	return f.srv.URL + href
}

// button returns the link of the button of an action on a page.
func button(t *testing.T, body string, kind console.ActionKind) string {
	t.Helper()
	m := regexp.MustCompile(`href="([^"]*)" data-action="` + string(kind) + `"`).FindStringSubmatch(body)
	require.NotNil(t, m, "no %s button on the page:\n%s", kind, body)
	return m[1]
}

// hasButton reports whether a page offers an action.
func hasButton(body string, kind console.ActionKind) bool {
	return strings.Contains(body, `data-action="`+string(kind)+`"`)
}

// confirmForm is the form of a confirmation page.
type confirmForm struct {
	action string // where it POSTs, absolute
	token  string
}

// confirmation opens the confirmation page of a button and reads its form.
func (f *fixture) confirmation(href string) confirmForm {
	f.t.Helper()
	status, body := f.get(html.UnescapeString(href))
	require.Equal(f.t, http.StatusOK, status, body)
	action := regexp.MustCompile(`<form method="post" action="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(f.t, action, body)
	token := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(f.t, token, body)
	return confirmForm{action: f.abs(action[1]), token: html.UnescapeString(token[1])}
}

// post POSTs form to a confirmation's address as a browser of the same
// origin does, and returns the response without following a redirect.
func (f *fixture) post(c confirmForm, extra url.Values, header http.Header) *http.Response {
	f.t.Helper()
	form := url.Values{"csrf": {c.token}}
	for k, v := range extra {
		form[k] = v
	}
	req, err := http.NewRequest(http.MethodPost, c.action, strings.NewReader(form.Encode()))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header[k] = v
	}
	client := *f.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// do presses a button, confirms, and returns the page the action
// redirects to.
func (f *fixture) do(href string, extra url.Values) string {
	f.t.Helper()
	resp := f.post(f.confirmation(href), extra, nil)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(f.t, http.StatusSeeOther, resp.StatusCode, string(b))
	loc := resp.Header.Get("Location")
	require.True(f.t, strings.HasPrefix(loc, f.prefix+"/"), "redirect to %q keeps the prefix %q", loc, f.prefix)
	return f.page(loc)
}

// flash returns the flash message of a page, "" when it has none.
func flash(body string) string {
	m := regexp.MustCompile(`<div class="flash (ok|error)" role="status">([^<]*)</div>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1] + ": " + html.UnescapeString(m[2])
}
