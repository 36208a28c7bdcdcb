package main

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

// appConfig is what the program needs to run, from flags or the demo.
type appConfig struct {
	QueueDir string            // durable queue, one file per page
	OutDir   string            // the Markdown mirror and its manifest
	APIURL   string            // page API base URL
	Token    string            // page API bearer token, optional
	Secret   []byte            // webhook HMAC secret, optional
	Rate     float64           // page API requests per second
	Burst    int               // page API burst
	Workers  int               // pages fetched at once
	Backoff  pacer.Backoff     // waits between retries of a failed page
	Base     http.RoundTripper // transport under the pacing; http.DefaultTransport when nil
	Logger   *slog.Logger
}

// An app is the sync service: webhook -> durable queue -> wake-up -> worker
// -> store, with a token bucket in front of the page API.
type app struct {
	q      *queue
	st     *store
	hook   *webhook
	worker *worker
	bucket *ratelimit.Bucket
}

func newApp(cfg appConfig) (*app, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Backoff == (pacer.Backoff{}) {
		cfg.Backoff = backoff(500*time.Millisecond, time.Minute)
	}
	q, err := openQueue(cfg.QueueDir)
	if err != nil {
		return nil, err
	}
	st, err := openStore(cfg.OutDir)
	if err != nil {
		return nil, err
	}
	bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
	if err != nil {
		return nil, err
	}
	c := &client{base: cfg.APIURL, token: cfg.Token,
		hc: &http.Client{Transport: &ratelimit.Transport{Base: cfg.Base, Limiter: bucket}}}
	wake := newWakeup()
	return &app{
		q: q, st: st, bucket: bucket,
		hook: &webhook{secret: cfg.Secret, q: q, wake: wake, log: cfg.Logger},
		worker: &worker{q: q, st: st, fetch: c.fetch, wake: wake, backoff: cfg.Backoff,
			workers: cfg.Workers, log: cfg.Logger, retry: make(map[string]retryState)},
	}, nil
}

// routes is the program's HTTP surface.
func routes(a *app) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", a.hook)
	return mux
}

// backoff doubles from initial up to maxWait with 20% jitter, forever: a
// failed page stays queued until it syncs.
func backoff(initial, maxWait time.Duration) pacer.Backoff {
	return pacer.Backoff{Initial: initial, Max: maxWait, Multiplier: 2, Jitter: 0.2}
}
