package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/pacerkit/pacer"
)

// A report is what the demo saw and the checks it made.
type report struct {
	leftover         int  // queue items the crashed run left
	restartSynced    int  // pages synced by the restart before the burst
	restartQueue     int  // queue length once they were synced
	restartManifest  bool // the manifest file listed them then
	accepted         int64
	ignored          int64
	unauthorized     int
	refusedClosed    int // webhooks refused once intake had stopped
	queuedAtShutdown int
	sync             *syncCounts
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

// check completes rep from the finished run and makes the checks.
func (d *demo) check(rep *report, crashed, a *app) (err error) {
	rep.accepted = crashed.hook.accepted.Load() + a.hook.accepted.Load()
	rep.ignored = a.hook.ignored.Load()
	rep.unauthorized, rep.refusedClosed = d.statuses[401], d.statuses[503]+d.statuses[0]
	rep.sync, rep.written = &a.counts, int(a.st.written.Load())
	if rep.runner, err = a.runner.Stats(context.Background()); err != nil {
		return err
	}
	rep.fetches, rep.failed = d.fake.counts()
	rep.left, _ = a.q.len()
	if rep.manifest, err = readManifest(d.cfg.OutDir); err != nil {
		return err
	}
	rep.checks = []check{
		{"the restart synced every change the crashed run had queued", rep.leftover == len(crashPages) && rep.restartSynced == len(crashPages) && rep.restartQueue == 0},
		{"the manifest on disk followed each sync, before any shutdown", rep.restartManifest},
		{"every page's file and manifest entry hold its latest version", d.onDisk(demoPages) && len(rep.manifest.Pages) == len(demoPages)},
		{"rapid updates coalesced: fewer fetches than accepted changes", rep.fetches < int(rep.accepted)},
		{"failed fetches stayed queued and were retried", rep.failed > 0 && rep.runner.Retries >= uint64(rep.failed)},
		{"the queue is empty at the end", rep.left == 0},
		{"intake stopped before the drain: the late webhook was refused", rep.refusedClosed == 1},
		{"a bad signature was refused with 401", rep.unauthorized == 1},
	}
	return nil
}

// ok reports whether every check held.
func (r *report) ok() bool {
	return !slices.ContainsFunc(r.checks, func(c check) bool { return !c.ok })
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "restart: a crashed run left %d pages queued; the restart synced %d before anything else\n", r.leftover, r.restartSynced)
	fmt.Fprintf(w, "webhooks: %d page changes accepted, %d ignored (not a page), %d refused with 401 (bad signature), %d refused after shutdown began\n",
		r.accepted, r.ignored, r.unauthorized, r.refusedClosed)
	fmt.Fprintf(w, "runner: %d handler calls for %d changes, %d retried (%d fetches failed with 500), %d re-run (changed while syncing)\n",
		r.runner.Batches, r.runner.Received, r.runner.Retries, r.failed, r.runner.Reruns)
	fmt.Fprintf(w, "sync: %d fetches, %d pages synced, %d kept queued (changed while syncing), %d files written\n",
		r.fetches, r.sync.Synced.Load(), r.sync.Requeue.Load(), r.written)
	fmt.Fprintf(w, "shutdown: %d pages queued when intake stopped; synced in %v; the manifest lists %d pages\n",
		r.queuedAtShutdown, r.shutdown.Round(10*time.Millisecond), len(r.manifest.Pages))
	fmt.Fprintf(w, "queue at the end: %d items\nchecks:\n", r.left)
	for _, c := range r.checks {
		fmt.Fprintf(w, "  %s %s\n", map[bool]string{true: "ok  ", false: "FAIL"}[c.ok], c.name)
	}
	fmt.Fprintf(w, "took %v\n", r.took.Round(10*time.Millisecond))
}
