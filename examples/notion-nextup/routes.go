package main

import (
	"net/http"
)

// routes is the program's HTTP surface: the webhook and a stats page.
func routes(a *app) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", a.hook)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"runner": a.runner.Stats(), "bucket": a.bucket.Stats()})
	})
	return mux
}
