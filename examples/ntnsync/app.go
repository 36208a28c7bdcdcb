package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
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
	Workers  int               // pages synced at once
	Debounce time.Duration     // quiet period of a page before it is synced; 0 syncs at once
	MaxWait  time.Duration     // a page edited without pause is still synced this long after its first change; needs Debounce
	Backoff  pacer.Backoff     // waits between retries of a failed page
	Base     http.RoundTripper // transport under the pacing; http.DefaultTransport when nil
	Logger   *slog.Logger
}

// A change is what the Runner holds for a page: nothing but the fact that
// it changed. What changed is on disk, in the page's queue item.
type change struct{}

// An app is the sync service: webhook -> durable queue -> pacer.Runner ->
// page API -> store. The queue is the record of what is left to do and
// survives a crash; the Runner, rebuilt from the queue at every start,
// decides when each page is synced: once its changes go quiet, one sync
// per page at a time, Workers pages at once, under the page API's rate
// limit, failures retried with backoff.
type app struct {
	cfg    appConfig
	log    *slog.Logger
	q      *queue
	st     *store
	hook   *webhook
	runner *pacer.Runner[string, change]
	fetch  func(ctx context.Context, id string) (page, error)
	unlock func() error // of the queue directory's lock file

	halted atomic.Bool // crash: the handler does nothing any more

	mu     sync.Mutex
	counts syncCounts
}

// openApp opens the sync on its directories. It takes the queue
// directory's lock file, removes the temporary files a killed run left,
// makes the manifest agree with the page files, and gives every page still
// queued to the Runner, so that what a previous run accepted is synced
// first. The caller must call shutdown (or, in the demo, crash).
func openApp(cfg appConfig) (*app, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Backoff == (pacer.Backoff{}) {
		cfg.Backoff = backoff(500*time.Millisecond, time.Minute)
	}
	if err := os.MkdirAll(cfg.QueueDir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockQueue(cfg.QueueDir)
	if err != nil {
		return nil, err
	}
	a, err := newApp(cfg, unlock)
	if err != nil {
		_ = unlock()
		return nil, err
	}
	return a, nil
}

func newApp(cfg appConfig, unlock func() error) (*app, error) {
	q, err := openQueue(cfg.QueueDir)
	if err != nil {
		return nil, err
	}
	st, lost, err := openStore(cfg.OutDir)
	if err != nil {
		return nil, err
	}
	for _, id := range lost {
		// The manifest listed a file that is gone: fetch the page again.
		if err := q.put(id, time.Now()); err != nil {
			return nil, err
		}
	}
	bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
	if err != nil {
		return nil, err
	}
	// The same bucket paces the Runner's calls and the client's requests:
	// a call's request goes out on the token the Runner took for it, and
	// a 429 with Retry-After pauses both.
	c := &client{base: cfg.APIURL, token: cfg.Token,
		hc: &http.Client{Transport: &ratelimit.Transport{Base: cfg.Base, Limiter: bucket}}}
	a := &app{cfg: cfg, log: cfg.Logger, q: q, st: st, fetch: c.fetch, unlock: unlock}
	a.runner, err = pacer.New(pacer.Config[string, change]{
		Debounce: cfg.Debounce,
		MaxWait:  cfg.MaxWait,
		Workers:  max(cfg.Workers, 1),
		Retry:    cfg.Backoff,
		Limiter:  bucket,
		OnEvent:  a.onEvent,
		OnDrop:   a.onDrop,
	}, a.syncPage)
	if err != nil {
		return nil, err
	}
	a.hook = &webhook{secret: cfg.Secret, q: q, log: cfg.Logger, notify: func(ctx context.Context, id string) error {
		return a.runner.Add(ctx, id, change{})
	}}
	items, err := q.list()
	if err == nil {
		for _, it := range items {
			if err = a.runner.Add(context.Background(), it.PageID, change{}); err != nil {
				break
			}
		}
	}
	if err != nil {
		a.stopNow()
		return nil, err
	}
	return a, nil
}

// run syncs pages until ctx ends or shutdown has drained the Runner.
func (a *app) run(ctx context.Context) error { return a.runner.Run(ctx) }

// shutdown stops intake, syncs every page still queued (retries included)
// and releases the queue directory. If ctx ends first, the pages not
// synced stay queued on disk for the next start, and shutdown returns an
// error that wraps ctx.Err().
func (a *app) shutdown(ctx context.Context) error {
	a.hook.stop()
	err := a.runner.Shutdown(ctx)
	if uerr := a.unlock(); err == nil {
		err = uerr
	}
	return err
}

// crash stops a as a kill -9 would, for the demo that plays one in the
// process: nothing more is synced, the Runner's memory is dropped and the
// files stay as they are.
func (a *app) crash() {
	a.hook.stop()
	a.stopNow()
	_ = a.unlock()
}

// stopNow stops the Runner without syncing anything more.
func (a *app) stopNow() {
	a.halted.Store(true)
	_ = a.runner.Shutdown(canceled())
}

// onEvent logs the Runner's retries.
func (a *app) onEvent(e pacer.Event[string]) {
	if e.Kind == pacer.EventRetry {
		a.log.Info("sync failed, will retry", "page", e.Key, "attempt", e.Attempt, "in", e.Delay, "err", e.Err)
	}
}

// onDrop is called for the pages a shutdown cut short: their queue items
// stay on disk, so the next start syncs them.
func (a *app) onDrop(id string, changes []change, err error) {
	if !a.halted.Load() {
		a.log.Warn("page left queued for the next start", "page", id, "err", err)
	}
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
	return pacer.Backoff{Initial: initial, Max: maxWait, Multiplier: 2, Jitter: 0.2, Attempts: pacer.Unlimited}
}

// canceled returns a context that has ended, for a Shutdown that must stop
// at once.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
