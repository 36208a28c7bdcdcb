package main

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
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
	Backoff  pacer.Backoff     // waits between retries of a failed page; zero: backoff(500ms, 1m)
	Base     http.RoundTripper // transport under the pacing; http.DefaultTransport when nil
	Logger   *slog.Logger
}

// A change is what the Runner holds for a page: nothing but the fact that
// it changed. What changed is on disk, in the page's queue item.
type change struct{}

// An app is the sync service: webhook -> durable queue -> pacer.Runner ->
// page API -> mirror.
type app struct {
	cfg    appConfig
	log    *slog.Logger
	q      *queue
	st     *store
	hook   *webhook
	runner *pacer.Runner[string, change]
	api    *client
	unlock func() error // of the queue directory's lock file
	halted atomic.Bool  // the demo's crash: the handler does nothing any more
	counts syncCounts
}

// syncCounts is what the handler did.
type syncCounts struct {
	Fetches atomic.Int64 // fetch attempts
	Synced  atomic.Int64 // pages whose queue item was removed after a write
	Requeue atomic.Int64 // pages written but changed again meanwhile, so kept queued
	Dropped atomic.Int64 // pages dropped after a permanent error
}

// openDirs takes the queue directory's lock file, opens the queue and the
// mirror, and queues again the pages whose file is gone.
func openDirs(cfg appConfig) (_ *app, err error) {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Backoff == (pacer.Backoff{}) {
		cfg.Backoff = backoff(500*time.Millisecond, time.Minute)
	}
	if err := os.MkdirAll(cfg.QueueDir, 0o755); err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: cfg.Logger}
	if a.unlock, err = lockQueue(cfg.QueueDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = a.unlock()
		}
	}()
	if a.q, err = openQueue(cfg.QueueDir); err != nil {
		return nil, err
	}
	var lost []string
	if a.st, lost, err = openStore(cfg.OutDir); err != nil {
		return nil, err
	}
	for _, id := range lost {
		if err := a.q.put(id, time.Now()); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// abandon stops a as a kill -9 would (the demo plays one in the process):
// nothing more is synced, the Runner's memory is dropped and the files stay
// as they are, for the next start.
func (a *app) abandon() {
	a.hook.stop()
	a.halted.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a Shutdown that stops at once
	_ = a.runner.Shutdown(ctx)
	_ = a.unlock()
}

func (a *app) onEvent(e pacer.Event[string]) {
	if e.Kind == pacer.EventRetry {
		a.log.Info("sync failed, will retry", "page", e.Key, "attempt", e.Attempt, "in", e.Delay, "err", e.Err)
	}
}

// onDrop is called for the pages a shutdown cut short: their queue items
// stay on disk, so the next start syncs them.
func (a *app) onDrop(id string, _ []change, err error) {
	if !a.halted.Load() {
		a.log.Warn("page left queued for the next start", "page", id, "err", err)
	}
}

// backoff doubles from initial up to maxWait with 20% jitter, forever: a
// failed page stays queued until it syncs.
func backoff(initial, maxWait time.Duration) pacer.Backoff {
	return pacer.Backoff{Initial: initial, Max: maxWait, Multiplier: 2, Jitter: 0.2, Attempts: pacer.Unlimited}
}
