package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// demoPages are the pages people edit in the demo; crashPages are edited
// while the first run is down to its queue only.
var (
	demoPages  = []string{"roadmap", "meeting-notes", "runbook", "hiring-plan", "okrs"}
	crashPages = []string{"runbook", "okrs"}
)

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

// runDemo plays the embedded scenario over loopback and prints its report.
func runDemo(ctx context.Context, cfg appConfig, addr, dir string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ntnsync-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	cfg.QueueDir, cfg.OutDir = filepath.Join(dir, "queue"), filepath.Join(dir, "pages")
	if len(cfg.Secret) == 0 {
		cfg.Secret = []byte("demo-secret")
	}
	fake := newDemoNotion(30*time.Millisecond, 4, time.Now())
	apiSrv, err := hookhttp.Listen("127.0.0.1:0", fake)
	if err != nil {
		return err
	}
	defer apiSrv.Shutdown(context.Background())
	cfg.APIURL = apiSrv.URL()
	expose := func(a *app) (poster, func(context.Context) error, error) {
		srv, err := listen(addr, routes(a), defaultTimeouts)
		if err != nil {
			return nil, nil, err
		}
		stop := func(ctx context.Context) error { _, err := srv.shutdown(ctx); return err }
		return hookhttp.PostJSON(http.DefaultClient, srv.url()+"/webhook"), stop, nil
	}
	fmt.Fprintf(stdout, "ntnsync demo in %s: %d pages, fake page API at %s paced at %g req/s (burst %d), every 4th fetch fails, %v debounce per page\n",
		dir, len(demoPages), apiSrv.URL(), cfg.Rate, cfg.Burst, cfg.Debounce)
	rep, err := (&demo{cfg: cfg, fake: fake, expose: expose, gap: 20 * time.Millisecond}).run(ctx)
	if err != nil {
		return err
	}
	rep.print(stdout)
	if !rep.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}

// A poster delivers one webhook request and returns the HTTP status.
type poster func(ctx context.Context, body []byte, signature string) (int, error)

// An exposer makes a's webhook reachable: it returns how to post to it and
// how to stop taking requests (close the listener). The tests serve it in
// the process.
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
	statuses map[int]int // of the webhooks posted; 0: no answer
}

func (d *demo) run(ctx context.Context) (*report, error) {
	start := time.Now()
	d.statuses = map[int]int{}
	rep := &report{}

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
	rep.leftover, _ = crashed.q.len()

	// 2. The restart syncs what the crash left queued before anything
	// else, and the manifest on disk follows each sync.
	a, err := openApp(d.cfg)
	if err != nil {
		return nil, err
	}
	running := make(chan struct{})
	go func() { defer close(running); _ = a.run(context.WithoutCancel(ctx)) }()
	defer func() { _ = a.shutdown(canceled()); <-running }() // a no-op after a graceful one
	if post, stopIntake, err = d.expose(a); err != nil {
		return nil, err
	}
	for a.snapshot().Synced < rep.leftover {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for the restart to sync leftovers: %w", ctx.Err())
		}
		time.Sleep(d.gap)
	}
	rep.restartSynced = a.snapshot().Synced
	rep.restartQueue, _ = a.q.len()
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
	rep.shutdown, rep.took = time.Since(shutStart), time.Since(start)
	return rep, d.check(rep, crashed, a)
}

// editPage makes a new version of page id and announces it.
func (d *demo) editPage(ctx context.Context, post poster, id string) {
	d.fake.edit(id, time.Now())
	d.send(ctx, post, fmt.Appendf(nil, `{"type":"page.content_updated","entity":{"id":%q,"type":"page"}}`, id), true)
}

// send posts body, signed or not, and counts the answer.
func (d *demo) send(ctx context.Context, post poster, body []byte, signed bool) {
	sig := ""
	if signed {
		sig = hookhttp.Sign(d.cfg.Secret, body)
	}
	status, _ := post(ctx, body, sig) // 0 when it found no listener
	d.mu.Lock()
	defer d.mu.Unlock()
	d.statuses[status]++
}

// onDisk reports whether the manifest file lists pages ids at the
// versions their files hold, which are the page API's latest.
func (d *demo) onDisk(ids []string) bool {
	m, err := readManifest(d.cfg.OutDir)
	for _, id := range ids {
		want := d.fake.current(id)
		got, ferr := os.ReadFile(filepath.Join(d.cfg.OutDir, id+".md"))
		if err != nil || ferr != nil || !slices.Equal(got, markdown(want)) || m.Pages[id].Version != want.Version {
			return false
		}
	}
	return err == nil
}
