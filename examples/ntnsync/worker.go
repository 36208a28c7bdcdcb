package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pacerkit/pacer"
)

// A worker syncs queued pages into the store. It sleeps until woken (a
// webhook queued something) or until a failed page's backoff ends, then
// makes a pass over the queue: for each due page, fetch and convert it with
// no lock held, write its file under the store's lock for that page, and
// remove the queue item only if no newer change arrived meanwhile. A failed
// page stays in the durable queue and is retried after a backoff; a page the
// API refuses for good (a 4xx other than 429) is dropped from the queue.
type worker struct {
	q       *queue
	st      *store
	fetch   func(ctx context.Context, id string) (page, error)
	wake    wakeup
	backoff pacer.Backoff
	workers int // pages fetched at once
	log     *slog.Logger

	mu     sync.Mutex
	retry  map[string]retryState
	counts workerCounts
}

type retryState struct {
	attempts  int
	notBefore time.Time
}

// workerCounts is what a worker did.
type workerCounts struct {
	Passes  int // passes over the queue
	Fetches int // fetch attempts
	Synced  int // pages whose queue item was removed after a write
	Requeue int // pages written but changed again meanwhile, so kept queued
	Retries int // failed fetches or writes, kept queued for a retry
	Dropped int // pages dropped after a permanent error
}

// run syncs until ctx ends, starting with whatever the queue holds (items a
// crash left behind). A page being synced when ctx ends is finished first.
func (w *worker) run(ctx context.Context) {
	w.wake.notify()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-timer.C:
		}
		next, _ := w.pass(ctx)
		wait := time.Hour
		if !next.IsZero() {
			wait = max(time.Until(next), 0)
		}
		timer.Reset(wait)
	}
}

// drain syncs until the queue is empty, retrying failures after their
// backoff, and gives up when ctx ends: what is left stays queued on disk.
// It is the worker's last job in a graceful shutdown, after intake stopped.
func (w *worker) drain(ctx context.Context) error {
	for {
		next, left := w.pass(ctx)
		if left == 0 {
			return nil
		}
		t := time.NewTimer(max(time.Until(next), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// pass syncs every due item once, up to w.workers at a time, and returns
// when the earliest item still queued becomes due (zero if none waits for a
// backoff) and how many items are still queued.
func (w *worker) pass(ctx context.Context) (next time.Time, left int) {
	items, err := w.q.list()
	if err != nil {
		w.log.Error("listing queue", "err", err)
		return time.Now().Add(time.Second), 1
	}
	w.mu.Lock()
	w.counts.Passes++
	w.mu.Unlock()
	var g errgroup.Group
	g.SetLimit(max(w.workers, 1))
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		if !w.due(it.PageID) {
			continue
		}
		// The page is finished even if ctx ends meanwhile: a shutdown
		// waits for it instead of leaving a half-done sync.
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		g.Go(func() error {
			defer cancel()
			w.syncPage(ictx, it)
			return nil
		})
	}
	g.Wait()

	items, err = w.q.list()
	if err != nil {
		return time.Now().Add(time.Second), 1
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, it := range items {
		if r, ok := w.retry[it.PageID]; ok && (next.IsZero() || r.notBefore.Before(next)) {
			next = r.notBefore
		}
	}
	return next, len(items)
}

// due reports whether page id is not waiting for a backoff.
func (w *worker) due(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !time.Now().Before(w.retry[id].notBefore)
}

// syncPage fetches, converts, writes and acks one queued page.
func (w *worker) syncPage(ctx context.Context, it item) {
	w.count(func(c *workerCounts) { c.Fetches++ })
	p, err := w.fetch(ctx, it.PageID)
	var se *statusError
	if errors.As(err, &se) && se.permanent() {
		w.log.Warn("dropping page", "page", it.PageID, "err", err)
		if _, aerr := w.q.ack(it); aerr != nil {
			w.failed(it, aerr)
			return
		}
		w.forget(it.PageID)
		w.count(func(c *workerCounts) { c.Dropped++ })
		return
	}
	if err != nil {
		w.failed(it, err)
		return
	}
	md := markdown(p) // no lock held while converting
	if _, err := w.st.write(p, md, time.Now()); err != nil {
		w.failed(it, err)
		return
	}
	removed, err := w.q.ack(it)
	if err != nil {
		w.failed(it, err)
		return
	}
	w.forget(it.PageID)
	if removed {
		w.count(func(c *workerCounts) { c.Synced++ })
	} else {
		w.count(func(c *workerCounts) { c.Requeue++ })
		w.wake.notify() // the newer change is due now
	}
	w.log.Info("synced", "page", it.PageID, "version", p.Version, "updates", it.Updates)
}

// failed keeps it queued and schedules its retry.
func (w *worker) failed(it item, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.retry[it.PageID]
	r.attempts++
	d := w.backoff.Delay(r.attempts)
	r.notBefore = time.Now().Add(d)
	w.retry[it.PageID] = r
	w.counts.Retries++
	w.log.Info("sync failed, will retry", "page", it.PageID, "attempt", r.attempts, "in", d, "err", err)
}

func (w *worker) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.retry, id)
}

func (w *worker) count(f func(*workerCounts)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(&w.counts)
}

// snapshot returns the counts so far.
func (w *worker) snapshot() workerCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts
}
