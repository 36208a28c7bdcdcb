package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// chromium returns the browser's binary, skipping the test (failing it
// under CI) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PACER_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium: install Debian's chromium package or set PACER_CHROMIUM to run the browser tests"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// site is a console over a Memory on a mock clock, served under /pacer/,
// with a browser to look at it.
type site struct {
	t     *testing.T
	clk   *clock.Mock
	mem   *store.Memory
	srv   *httptest.Server
	ctx   context.Context // the browser tab's
	shots string
	mu    sync.Mutex
	acts  []console.Action
}

// open starts the site and a headless browser.
func open(t *testing.T) *site {
	t.Helper()
	bin := chromium(t)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC))
	s := &site{t: t, clk: clk, mem: store.NewMemory(store.MemoryConfig{Clock: clk})}
	h, err := console.New(console.Config{
		Store: s.mem,
		Now:   clk.Now,
		Authorize: func(r *http.Request, a console.Action) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.acts = append(s.acts, a)
			return nil
		},
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/pacer/", http.StripPrefix("/pacer", h))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)

	s.shots = os.Getenv("PACER_SCREENSHOTS")
	if s.shots == "" {
		s.shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(s.shots, 0o755))

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
	})
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	s.ctx = ctx
	return s
}

// url is the address of a console page.
func (s *site) url(path string) string { return s.srv.URL + "/pacer/" + strings.TrimPrefix(path, "/") }

// run runs browser actions, failing the test on an error.
func (s *site) run(actions ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	require.NoError(s.t, chromedp.Do(s.ctx, actions...))
}

// shot saves a screenshot of the whole page as name.png.
func (s *site) shot(name string) {
	s.t.Helper()
	png, err := chromedp.Run(s.ctx, chromedp.FullScreenshot(100))
	require.NoError(s.t, err)
	path := filepath.Join(s.shots, name+".png")
	require.NoError(s.t, os.WriteFile(path, png, 0o644))
	s.t.Logf("screenshot %s", path)
}

// text returns the text of the first element that sel selects.
func (s *site) text(sel string) string {
	s.t.Helper()
	txt, err := chromedp.Run(s.ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(s.t, err)
	return txt
}

// texts returns the texts of every element that sel selects.
func (s *site) texts(sel string) []string {
	s.t.Helper()
	out, err := chromedp.Run(s.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(`+quoteJS(sel)+`)).map(e => e.innerText.trim())`))
	require.NoError(s.t, err)
	return out
}

// quoteJS quotes s as a JavaScript string.
func quoteJS(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// add adds values to key of queue, ready at once, then moves the clock on.
func (s *site) add(queue, key string, step time.Duration, vals ...string) {
	s.t.Helper()
	bs := make([][]byte, len(vals))
	for i, v := range vals {
		bs[i] = []byte(v)
	}
	require.NoError(s.t, s.mem.Add(context.Background(), queue, key, bs, store.AddParams{}))
	s.clk.Add(step)
}

// lease claims the next ready key of queue for holder.
func (s *site) lease(queue, holder string) store.Lease {
	s.t.Helper()
	ls, _, err := s.mem.Claim(context.Background(), queue, store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: holder})
	require.NoError(s.t, err)
	require.Len(s.t, ls, 1)
	return ls[0]
}

// finish ends l as o says.
func (s *site) finish(l store.Lease, o store.Outcome) {
	s.t.Helper()
	_, err := s.mem.Finish(context.Background(), l, o)
	require.NoError(s.t, err)
}

// seed fills the store with what an operator may meet: queues with keys
// in every state, values of JSON, text and bytes, dead letters.
func (s *site) seed() {
	s.t.Helper()
	ctx := context.Background()
	for i, k := range []string{"tenant-17/invoice-2041", "tenant-17/invoice-2042", "tenant-3/invoice-88", "tenant-9/refund-7"} {
		s.add("emails", k, 40*time.Second, `{"template":"invoice","to":"billing@example.com","invoice":`+string(rune('1'+i))+`}`)
	}
	s.add("emails", "tenant-3/welcome", 2*time.Minute, "Welcome aboard!\nYour account is ready.")
	s.add("emails", "tenant-5/digest", time.Minute, "\x1f\x8b\x08\x00 compressed digest \xff\x00")
	s.finish(s.lease("emails", "mailer-1/pid-4411"), store.Outcome{Kind: store.Retry, After: 10 * time.Minute, Err: "smtp: 451 4.7.1 try again later"})
	s.finish(s.lease("emails", "mailer-1/pid-4411"), store.Outcome{Kind: store.Hold, Err: "template \"invoice\" has no translation for locale \"pt-BR\""})
	s.lease("emails", "mailer-2/pid-907")
	require.NoError(s.t, s.mem.Add(ctx, "emails", "tenant-17/reminder", [][]byte{[]byte(`{"template":"reminder"}`)}, store.AddParams{Wait: time.Hour}))
	for i := range 40 {
		s.add("emails", "tenant-40/newsletter-"+string(rune('a'+i%26))+string(rune('a'+i/26)), time.Second, `{"template":"newsletter"}`)
	}

	s.add("webhooks", "acme.example/orders", 30*time.Second, `{"event":"order.created","id":"ord_1"}`, `{"event":"order.paid","id":"ord_1"}`)
	s.add("webhooks", "globex.example/hooks", 30*time.Second, `{"event":"user.deleted","id":"usr_9"}`)
	s.finish(s.lease("webhooks", "hooks-1"), store.Outcome{Kind: store.Drop, Err: "POST https://acme.example/orders: 410 Gone"})
	s.finish(s.lease("webhooks", "hooks-1"), store.Outcome{Kind: store.Drop, Err: "POST https://globex.example/hooks: x509: certificate has expired"})
	s.add("webhooks", "initech.example/events", 3*time.Minute, `{"event":"ping"}`)

	s.add("reports", "monthly/2026-02", time.Minute, `{"kind":"monthly","month":"2026-02","rows":18230}`)
}

// wait waits for the JavaScript expression js to be true in the page,
// reading it again every 100 ms (a page that is loading may not answer).
func (s *site) wait(js string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(s.ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the page never showed %s (last error: %v)", js, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
