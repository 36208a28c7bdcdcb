package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// views holds the parsed pages and the embedded assets.
type views struct {
	pages   map[string]*template.Template // by page name, each with the layout
	static  map[string][]byte             // by file name
	version string                        // a hash of the assets, for their URLs
}

// pageNames are the templates that are whole pages; each defines "body".
var pageNames = []string{"overview", "queue", "key", "dead", "confirm", "message"}

// parseViews parses the templates and reads the assets.
func parseViews() (*views, error) {
	v := &views{pages: make(map[string]*template.Template), static: make(map[string][]byte)}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		v.pages[name] = t
	}
	h := sha256.New()
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		v.static[path.Base(p)] = b
		h.Write(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	v.version = hex.EncodeToString(h.Sum(nil))[:12]
	return v, nil
}

// funcs are the template functions that need no request.
var funcs = template.FuncMap{
	"verb": func(k ActionKind) string { return k.verb() },
	// count pairs a count with the class that colours it when not zero.
	"count": func(n int, class string) counted { return counted{n, class} },
}

// counted is a count as a table cell shows it.
type counted struct {
	N     int
	Class string
}

// serveStatic serves an embedded asset; its URL carries the assets'
// hash, so it may be cached for long.
func (v *views) serveStatic(w http.ResponseWriter, r *http.Request, name string) {
	b, ok := v.static[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".svg":
		w.Header().Set("Content-Type", "image/svg+xml")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

// page is what the layout shows around a page's body.
type page struct {
	Title    string
	Base     string
	Assets   string // the assets' version
	Crumbs   []crumb
	Flash    *flash
	ReadOnly bool
	Live     string // the address the page's table refreshes from, if any
	Notes    []string
	Now      time.Time
	Body     any
}

// crumb is a step of the page's trail; the last has no Href.
type crumb struct {
	Text string
	Href string
}

// When returns t as the pages show it, relative to the page's instant.
func (p *page) When(t time.Time) moment { return momentOf(t, p.Now) }

// newPage starts a page of the request, with its flash message.
func (q *request) newPage(title string, crumbs ...crumb) *page {
	return &page{
		Title:    title,
		Base:     q.base,
		Assets:   q.c.views.version,
		Crumbs:   crumbs,
		Flash:    q.takeFlash(),
		ReadOnly: q.c.readOnly(),
		Now:      q.c.now(),
	}
}

// render writes a page with status.
func (q *request) render(status int, name string, p *page) {
	q.execute(status, name, "layout", p)
}

// execute writes one template of a page, rendered whole before the
// first byte goes out, so that an error shows as an error page.
func (q *request) execute(status int, name, tmpl string, data any) {
	var buf bytes.Buffer
	if err := q.c.views.pages[name].ExecuteTemplate(&buf, tmpl, data); err != nil {
		http.Error(q.w, "console: "+err.Error(), http.StatusInternalServerError)
		return
	}
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.WriteHeader(status)
	if q.r.Method != http.MethodHead {
		q.w.Write(buf.Bytes())
	}
}

// fail shows a page that says what went wrong.
func (q *request) fail(status int, msg string) {
	p := q.newPage(http.StatusText(status))
	p.Body = message{Status: status, Title: http.StatusText(status), Text: msg}
	q.render(status, "message", p)
}

// storeFailed shows a page for an error of the store.
func (q *request) storeFailed(call string, err error) {
	q.fail(http.StatusBadGateway, fmt.Sprintf("The store's %s failed: %v", call, err))
}

// message is the body of a page that only says something.
type message struct {
	Status int
	Title  string
	Text   string
}

// capabilityNote says what a store without an optional interface cannot show.
func capabilityNote(iface, what string) string {
	return fmt.Sprintf("This store does not implement store.%s: %s.", iface, strings.TrimSuffix(what, "."))
}
