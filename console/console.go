package console

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// console is the handler New returns.
type console struct {
	st        store.Store
	insp      store.Inspector   // nil when the store has none
	op        store.Operator    // nil when the store has none
	dead      store.DeadLetters // nil when the store has none
	runners   map[string]pacer.RunnerView
	queues    []string // the Runners' queues, in Config order
	authorize func(*http.Request, Action) error
	now       func() time.Time
	csrf      csrf
	origin    *http.CrossOriginProtection
	views     *views
}

// New returns the console of cfg: an http.Handler that serves its pages
// and actions below any path prefix, mounted as is (at /) or under
// http.StripPrefix. Its links keep the prefix the request came with.
// It returns an error naming the first bad field of cfg.
//
// The handler is safe for concurrent use. Every page reads a bounded
// number of entries from the store (see the package doc), whatever the
// store holds.
func New(cfg Config) (http.Handler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &console{
		st:        cfg.Store,
		runners:   make(map[string]pacer.RunnerView, len(cfg.Runners)),
		authorize: cfg.Authorize,
		now:       cfg.Now,
		origin:    http.NewCrossOriginProtection(),
	}
	c.insp, _ = cfg.Store.(store.Inspector)
	c.op, _ = cfg.Store.(store.Operator)
	c.dead, _ = cfg.Store.(store.DeadLetters)
	for _, r := range cfg.Runners {
		c.runners[r.Queue()] = r
		c.queues = append(c.queues, r.Queue())
	}
	if c.now == nil {
		c.now = time.Now
	}
	key := cfg.CSRFKey
	if key == nil {
		key = make([]byte, minCSRFKey)
		rand.Read(key) // never fails (crypto/rand)
	}
	c.csrf = csrf{key: key}
	v, err := parseViews()
	if err != nil {
		return nil, err
	}
	c.views = v
	return c, nil
}

// readOnly reports whether every action is refused.
func (c *console) readOnly() bool { return c.authorize == nil }

// ServeHTTP routes a request by its path below the mount prefix.
func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base, ok := mountBase(r)
	if !ok {
		// The prefix without its slash: the relative world starts below it.
		http.Redirect(w, r, base, http.StatusMovedPermanently)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/")
	if name, ok := strings.CutPrefix(rest, "static/"); ok {
		c.views.serveStatic(w, r, name)
		return
	}
	securityHeaders(w.Header())
	req := &request{c: c, w: w, r: r, base: base}
	if rest == "act" {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			req.fail(http.StatusMethodNotAllowed, "Actions are POSTs.")
			return
		}
		req.act()
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		req.fail(http.StatusMethodNotAllowed, "Pages are read with GET.")
		return
	}
	switch rest {
	case "":
		req.overview()
	case "queues":
		req.overviewRows()
	case "queue":
		req.queue()
	case "key":
		req.key()
	case "dead":
		req.deadLetters()
	case "confirm":
		req.confirm()
	default:
		req.fail(http.StatusNotFound, "No such page.")
	}
}

// securityHeaders keeps the pages out of frames (so that no other site
// can overlay a confirmation button), out of caches, and limited to
// their own script and styles.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// mountBase returns the path under which the console is mounted, with a
// trailing slash: the request's own path without the part the handler
// sees (which http.StripPrefix took away). ok is false for the prefix
// without its trailing slash, which the caller redirects to base.
func mountBase(r *http.Request) (base string, ok bool) {
	full := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "" {
		full = u.Path
	}
	rest := r.URL.Path
	if rest == "" && !strings.HasSuffix(full, "/") {
		return full + "/", false
	}
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	prefix, found := strings.CutSuffix(full, rest)
	if !found {
		prefix = "" // rewritten by something other than StripPrefix: assume the root
	}
	return prefix + "/", true
}

// request is one request being served.
type request struct {
	c    *console
	w    http.ResponseWriter
	r    *http.Request
	base string // the mount prefix, with its trailing slash
}

// link returns the address of a page of the console with the query q,
// escaped for any bytes of a key.
func (q *request) link(page string, v url.Values) string {
	u := url.URL{Path: q.base + page, RawQuery: v.Encode()}
	return u.String()
}
