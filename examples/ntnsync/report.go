package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// A report is what the demo saw and the checks it made.
type report struct {
	dirs             string
	pages            int
	leftover         int // queue items the crashed run left
	restartSynced    int // pages synced by the restart before the burst
	restartQueue     int // queue length once they were synced
	accepted         int64
	ignored          int64
	unauthorized     int
	refusedClosed    int // webhooks refused once intake had stopped
	queuedAtShutdown int
	worker           workerCounts
	fetches, failed  int // seen by the page API
	written          int
	left             int
	manifest         manifest
	shutdown, took   time.Duration
	checks           []check
}

type check struct {
	name string
	ok   bool
}

// ok reports whether every check held.
func (r *report) ok() bool {
	for _, c := range r.checks {
		if !c.ok {
			return false
		}
	}
	return true
}

func (r *report) print(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "restart: a crashed run left %d pages queued; the restart synced %d before anything else\n", r.leftover, r.restartSynced)
	fmt.Fprintf(&b, "webhooks: %d page changes accepted, %d ignored (not a page), %d refused with 401 (bad signature), %d refused after shutdown began\n",
		r.accepted, r.ignored, r.unauthorized, r.refusedClosed)
	fmt.Fprintf(&b, "worker: %d passes, %d fetches for %d changes (%d failed with 500 and were retried), %d pages synced, %d re-queued (changed while syncing), %d files written\n",
		r.worker.Passes, r.fetches, r.accepted, r.failed, r.worker.Synced, r.worker.Requeue, r.written)
	fmt.Fprintf(&b, "shutdown: %d pages queued when intake stopped; worker finished and drained in %v; commit #%d records %d pages\n",
		r.queuedAtShutdown, r.shutdown.Round(10*time.Millisecond), r.manifest.Commits, len(r.manifest.Pages))
	fmt.Fprintf(&b, "queue at the end: %d items\n", r.left)
	b.WriteString("checks:\n")
	for _, c := range r.checks {
		mark := "ok  "
		if !c.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, c.name)
	}
	fmt.Fprintf(&b, "took %v\n", r.took.Round(10*time.Millisecond))
	io.WriteString(w, b.String())
}
