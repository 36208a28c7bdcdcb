// Package pagetime times the console's pages over an engine that holds a
// large queue: the measurements of the engines' modules render the same
// pages, the same way, so that their figures compare.
package pagetime

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// Page is a console page to time, by its address below the console's
// root, with a name for the table.
type Page struct {
	Name string
	Path string
}

// Pages are the pages of queue: the overview, the queue's first page of
// keys (50, and 100), filtered by state (the held keys, which few keys
// are, and the ready ones, which most are), by prefix and by both, key's
// page with its explanation, and the dead letters.
func Pages(queue, key, prefix string) []Page {
	q := "queue=" + queue
	return []Page{
		{"overview", "/"},
		{"overview rows", "/queues"},
		{"queue, 50 keys", "/queue?" + q},
		{"queue, 100 keys", "/queue?" + q + "&limit=100"},
		{"queue, state held", "/queue?" + q + "&state=held"},
		{"queue, state ready", "/queue?" + q + "&state=ready"},
		{"queue, prefix", "/queue?" + q + "&prefix=" + prefix},
		{"queue, prefix and ready", "/queue?" + q + "&prefix=" + prefix + "&state=ready"},
		{"key and its explanation", "/key?" + q + "&key=" + key},
		{"dead letters", "/dead?" + q},
	}
}

// Times renders page n times through h, one after the other, each into
// an httptest recorder, and returns the renders' p50 and p90 and the
// slowest. A render that does not answer 200 fails tb.
func Times(tb testing.TB, h http.Handler, page Page, n int) (p50, p90, top time.Duration) {
	tb.Helper()
	ds := make([]time.Duration, n)
	for i := range ds {
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, page.Path, nil))
		ds[i] = time.Since(start)
		if rec.Code != http.StatusOK {
			body, _ := io.ReadAll(rec.Body)
			tb.Fatalf("%s: %d %s", page.Path, rec.Code, body)
		}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(int(q*float64(n)), n-1)] }
	return at(0.5), at(0.9), ds[n-1]
}

// Table renders each page n times through h and writes a line per page
// to w: its name, p50, p90 and the slowest, in milliseconds. It returns
// the slowest p90.
func Table(tb testing.TB, w io.Writer, h http.Handler, pages []Page, n int) time.Duration {
	tb.Helper()
	var worst time.Duration
	for _, p := range pages {
		p50, p90, top := Times(tb, h, p, n)
		worst = max(worst, p90)
		fmt.Fprintf(w, "    %-26s p50 %7.1f ms   p90 %7.1f ms   max %7.1f ms\n", p.Name, ms(p50), ms(p90), ms(top))
	}
	return worst
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
