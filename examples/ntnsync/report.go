package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pacerkit/pacer"
)

// A report is what the demo saw and the checks it made.
type report struct {
	dirs             string
	pages            int
	leftover         int  // queue items the crashed run left
	restartSynced    int  // pages synced by the restart before the burst
	restartQueue     int  // queue length once they were synced
	restartManifest  bool // the manifest file listed them then
	accepted         int64
	ignored          int64
	unauthorized     int
	refusedClosed    int // webhooks refused once intake had stopped
	queuedAtShutdown int
	sync             syncCounts
	runner           pacer.Stats
	fetches, failed  int // seen by the page API
	written          int
	left             int
	manifest         manifest // read from disk at the end
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
	fmt.Fprintf(&b, "runner: %d handler calls for %d changes, %d retried (%d fetches failed with 500), %d re-run (changed while syncing)\n",
		r.runner.Batches, r.runner.Received, r.runner.Retries, r.failed, r.runner.Reruns)
	fmt.Fprintf(&b, "sync: %d fetches, %d pages synced, %d kept queued (changed while syncing), %d files written\n",
		r.fetches, r.sync.Synced, r.sync.Requeue, r.written)
	fmt.Fprintf(&b, "shutdown: %d pages queued when intake stopped; synced in %v; the manifest lists %d pages\n",
		r.queuedAtShutdown, r.shutdown.Round(10*time.Millisecond), len(r.manifest.Pages))
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
