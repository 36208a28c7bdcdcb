package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// A poster delivers one webhook request and returns the HTTP status.
type poster func(ctx context.Context, body []byte, signature string) (int, error)

// An exposer makes a's webhook reachable: it returns how to post to it and
// how to stop taking requests (close the listener).
type exposer func(a *app) (post poster, stop func(context.Context) error, err error)

// A demo plays the embedded scenario: a run that crashes with changes still
// queued, a restart that must sync them, a burst of page edits announced by
// webhook, then a graceful shutdown in the middle of the work.
type demo struct {
	cfg    appConfig // QueueDir, OutDir and APIURL set; Secret set
	fake   *fakeNotion
	expose exposer
	gap    time.Duration // between two rounds of edits

	mu       sync.Mutex
	statuses map[int]int
	postErrs int
}

// demoPages are the pages people edit in the demo.
var demoPages = []string{"roadmap", "meeting-notes", "runbook", "hiring-plan", "okrs"}

// crashPages are edited while the first run is down to its queue only.
var crashPages = []string{"runbook", "okrs"}

// burstRounds is how many times each page is edited in the burst.
const burstRounds = 5

func newDemoNotion(latency time.Duration, failEvery int, now time.Time) *fakeNotion {
	f := newFakeNotion(latency, failEvery)
	for i, id := range demoPages {
		f.create(page{ID: id, Title: fmt.Sprintf("Page %d: %s", i+1, id), Version: 1, LastEdited: now, Blocks: []block{
			{Type: "heading_1", Text: "Summary"},
			{Type: "paragraph", Text: "Kept in sync from the workspace."},
			{Type: "to_do", Text: "review", Checked: i%2 == 0},
			{Type: "code", Language: "sh", Text: "go run ./examples/ntnsync"},
			{Type: "heading_2", Text: "Revisions"},
		}})
	}
	return f
}

func (d *demo) run(ctx context.Context) (*report, error) {
	start := time.Now()
	d.statuses = make(map[int]int)
	rep := &report{dirs: filepath.Dir(d.cfg.QueueDir), pages: len(demoPages)}

	// 1. A run accepts two changes, then dies before it syncs them.
	crashed, err := openApp(d.cfg)
	if err != nil {
		return nil, err
	}
	post, stopIntake, err := d.expose(crashed)
	if err != nil {
		crashed.crash()
		return nil, err
	}
	for _, id := range crashPages {
		d.editPage(ctx, post, id)
	}
	err = stopIntake(ctx)
	crashed.crash()
	if err != nil {
		return nil, err
	}
	if rep.leftover, err = crashed.q.len(); err != nil {
		return nil, err
	}

	// 2. The restart syncs what the crash left queued before anything
	// else, and the manifest on disk follows each sync.
	a, err := openApp(d.cfg)
	if err != nil {
		return nil, err
	}
	running := make(chan struct{})
	go func() { defer close(running); _ = a.run(context.WithoutCancel(ctx)) }()
	defer func() { _ = a.shutdown(canceled()); <-running }() // a no-op after a graceful one
	post, stopIntake, err = d.expose(a)
	if err != nil {
		return nil, err
	}
	for a.snapshot().Synced < rep.leftover {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for the restart to sync leftovers: %w", ctx.Err())
		}
		time.Sleep(d.gap)
	}
	rep.restartSynced = a.snapshot().Synced
	if rep.restartQueue, err = a.q.len(); err != nil {
		return nil, err
	}
	rep.restartManifest = d.onDisk(crashPages)

	// 3. A burst of edits, each announced by webhook, plus requests the
	// webhook must refuse or ignore.
	for round := range burstRounds {
		for _, id := range demoPages {
			d.editPage(ctx, post, id)
		}
		switch round {
		case 1:
			d.send(ctx, post, []byte(`{"type":"page.content_updated","entity":{"id":"roadmap","type":"page"}}`), false)
		case 2:
			d.send(ctx, post, []byte(`{"type":"database.schema_updated","entity":{"id":"db1","type":"database"}}`), true)
		}
		time.Sleep(d.gap)
	}

	// 4. Graceful shutdown while pages are still queued: stop intake, then
	// sync everything queued.
	shutStart := time.Now()
	rep.queuedAtShutdown, _ = a.q.len()
	if err := stopIntake(ctx); err != nil {
		return nil, err
	}
	a.hook.stop()
	d.send(ctx, post, []byte(`{"type":"page.content_updated","entity":{"id":"okrs","type":"page"}}`), true)
	if err := a.shutdown(ctx); err != nil {
		return nil, fmt.Errorf("syncing the queue: %w", err)
	}
	<-running
	rep.shutdown = time.Since(shutStart)
	rep.took = time.Since(start)
	return rep, d.fill(rep, crashed, a)
}

// onDisk reports whether the manifest file lists pages ids at the
// versions their files hold, which are the page API's latest.
func (d *demo) onDisk(ids []string) bool {
	m, err := readManifest(d.cfg.OutDir)
	if err != nil {
		return false
	}
	for _, id := range ids {
		want := d.fake.current(id)
		got, err := os.ReadFile(filepath.Join(d.cfg.OutDir, id+".md"))
		if err != nil || !slices.Equal(got, markdown(want)) || m.Pages[id].Version != want.Version {
			return false
		}
	}
	return true
}

// editPage makes a new version of page id and announces it.
func (d *demo) editPage(ctx context.Context, post poster, id string) {
	d.fake.edit(id, time.Now())
	d.send(ctx, post, fmt.Appendf(nil, `{"type":"page.content_updated","entity":{"id":%q,"type":"page"}}`, id), true)
}

// send posts body, signed or not, and counts the answer; a request that
// finds no listener counts as refused.
func (d *demo) send(ctx context.Context, post poster, body []byte, signed bool) {
	sig := ""
	if signed {
		sig = hookhttp.Sign(d.cfg.Secret, body)
	}
	status, err := post(ctx, body, sig)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.postErrs++
		return
	}
	d.statuses[status]++
}

// fill completes rep from the finished run and makes the checks.
func (d *demo) fill(rep *report, crashed, a *app) error {
	rep.accepted = crashed.hook.accepted.Load() + a.hook.accepted.Load()
	rep.ignored = a.hook.ignored.Load()
	d.mu.Lock()
	rep.unauthorized = d.statuses[401]
	rep.refusedClosed = d.statuses[503] + d.postErrs
	d.mu.Unlock()
	rep.sync = a.snapshot()
	st, err := a.runner.Stats(context.Background())
	if err != nil {
		return err
	}
	rep.runner = st
	rep.fetches, rep.failed = d.fake.counts()
	rep.written = a.st.filesWritten()
	rep.left, _ = a.q.len()
	if rep.manifest, err = readManifest(d.cfg.OutDir); err != nil {
		return err
	}
	m := rep.manifest
	rep.checks = []check{
		{"the restart synced every change the crashed run had queued", rep.leftover == len(crashPages) && rep.restartSynced == len(crashPages) && rep.restartQueue == 0},
		{"the manifest on disk followed each sync, before any shutdown", rep.restartManifest},
		{"every page's file and manifest entry hold its latest version", d.onDisk(demoPages) && len(m.Pages) == len(demoPages)},
		{"rapid updates coalesced: fewer fetches than accepted changes", rep.fetches < int(rep.accepted)},
		{"failed fetches stayed queued and were retried", rep.failed > 0 && rep.runner.Retries >= uint64(rep.failed)},
		{"the queue is empty at the end", rep.left == 0},
		{"intake stopped before the drain: the late webhook was refused", rep.refusedClosed == 1},
		{"a bad signature was refused with 401", rep.unauthorized == 1},
	}
	return nil
}
