package main

import (
	"net/http"
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
		writeJSON(w, map[string]any{"runner": st, "bucket": a.bucket.Stats()})
	})
	return mux
}
