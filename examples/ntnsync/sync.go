package main

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// fetchTimeout bounds one fetch of a page.
const fetchTimeout = time.Minute

// errHalted is what the handler returns once the app crashed (demo only).
var errHalted = errors.New("ntnsync: halted")

// syncCounts is what the handler did.
type syncCounts struct {
	Fetches int // fetch attempts
	Synced  int // pages whose queue item was removed after a write
	Requeue int // pages written but changed again meanwhile, so kept queued
	Skipped int // calls that found nothing queued: an earlier call synced the change
	Dropped int // pages dropped after a permanent error
}

// syncPage is the Runner's handler: it syncs page id, whose changes are
// on disk in its queue item. The Runner calls it once the page's changes
// went quiet, never twice at once for one page, and retries it with
// backoff when it returns an error; the queue item then stays on disk.
//
// The steps are ordered so that a crash between any two of them leaves
// the page file, the manifest and the queue in agreement, or in a state
// the next start repairs: the page file is replaced atomically, then the
// manifest, and only then is the queue item removed, and only if no newer
// change rewrote it meanwhile (that change added the page to the Runner
// again, which syncs it after this call). A crash before the removal
// leaves the item queued, and the next start syncs the page again, which
// costs a fetch and loses nothing.
func (a *app) syncPage(ctx context.Context, id string, _ []change) error {
	if a.halted.Load() {
		return errHalted
	}
	it, err := a.q.read(id)
	if errors.Is(err, fs.ErrNotExist) {
		a.count(func(c *syncCounts) { c.Skipped++ })
		return nil
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	a.count(func(c *syncCounts) { c.Fetches++ })
	p, err := a.fetch(ctx, id)
	if se := (*statusError)(nil); errors.As(err, &se) && se.permanent() {
		// Retrying cannot help: drop the change, unless a newer one came.
		a.log.Warn("dropping page", "page", id, "err", err)
		if _, err := a.q.ack(it); err != nil {
			return err
		}
		a.count(func(c *syncCounts) { c.Dropped++ })
		return nil
	}
	if err != nil {
		return err
	}
	md := markdown(p) // no lock held while converting
	if _, err := a.st.write(p, md, time.Now()); err != nil {
		return err
	}
	removed, err := a.q.ack(it)
	if err != nil {
		return err
	}
	if removed {
		a.count(func(c *syncCounts) { c.Synced++ })
	} else {
		a.count(func(c *syncCounts) { c.Requeue++ })
	}
	a.log.Info("synced", "page", id, "version", p.Version, "updates", it.Updates)
	return nil
}

func (a *app) count(f func(*syncCounts)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(&a.counts)
}

// snapshot returns the counts so far.
func (a *app) snapshot() syncCounts {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts
}
