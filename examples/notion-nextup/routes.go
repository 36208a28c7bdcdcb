package main

import (
	"net/http"

	"github.com/pacerkit/pacer/ratelimit"
)

// routes is the program's HTTP surface: the webhook and a stats page.
func routes(a *app) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", a.hook)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		st, err := a.runner.Stats(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		out := map[string]any{"runner": st}
		// The bucket of the process has counters; a shared one keeps its
		// state in Redis.
		if b, ok := a.bucket.(*ratelimit.Bucket); ok {
			out["bucket"] = b.Stats()
		}
		writeJSON(w, out)
	})
	return mux
}
