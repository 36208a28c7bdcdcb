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
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// demoPages are the pages people edit in the demo; crashPages are edited
// during the run that crashes.
var (
	demoPages  = []string{"roadmap", "meeting-notes", "runbook", "hiring-plan", "okrs"}
	crashPages = []string{"runbook", "okrs"}
)

const burstRounds = 5 // times each page is edited in the burst

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
	fake := newDemoNotion(30*time.Millisecond, 4, time.Now())
	apiSrv, err := hookhttp.Listen("127.0.0.1:0", fake)
	if err != nil {
		return err
	}
	defer apiSrv.Shutdown(context.Background())
	cfg.APIURL = apiSrv.URL()
	d := &demo{cfg: cfg, fake: fake, gap: 20 * time.Millisecond}
	hookSrv, err := hookhttp.Listen(addr, d)
	if err != nil {
		return err
	}
	defer hookSrv.Shutdown(context.Background())
	d.post = hookhttp.PostJSON(http.DefaultClient, hookSrv.URL()+"/webhook")
	fmt.Fprintf(stdout, "ntnsync demo in %s: %d pages, fake page API at %s paced at %g req/s (burst %d), every 4th fetch fails, %v debounce per page\n",
		dir, len(demoPages), apiSrv.URL(), cfg.Rate, cfg.Burst, cfg.Debounce)
	rep, err := d.run(ctx)
	if err != nil {
		return err
	}
	rep.print(stdout)
	if !rep.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}

// A demo plays the embedded scenario (see README.md), and serves the
// webhook of the run going on.
type demo struct {
	cfg  appConfig // QueueDir, OutDir, APIURL and Secret set
	fake *fakeNotion
	gap  time.Duration                                                         // between two rounds of edits
	post func(ctx context.Context, body []byte, signature string) (int, error) // a webhook request to the demo; its status

	app      atomic.Pointer[app] // the run going on
	statuses map[int]int         // of the webhooks posted; 0: no answer
}

func (d *demo) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.app.Load().hook.ServeHTTP(w, r) }

func (d *demo) run(ctx context.Context) (*report, error) {
	start := time.Now()
	d.statuses = map[int]int{}
	rep := &report{}

	// 1. A run accepts two changes, then dies before it syncs them.
	crashed, err := openApp(d.cfg)
	if err != nil {
		return nil, err
	}
	d.app.Store(crashed)
	for _, id := range crashPages {
		d.editPage(ctx, id)
	}
	crashed.abandon()
	rep.leftover, _ = crashed.q.len()

	// 2. The restart syncs what the crash left queued before anything else.
	a, err := openApp(d.cfg)
	if err != nil {
		return nil, err
	}
	d.app.Store(a)
	running := make(chan struct{})
	go func() { defer close(running); _ = a.run(context.WithoutCancel(ctx)) }()
	defer func() { a.abandon(); <-running }() // a no-op after a graceful shutdown
	for a.counts.Synced.Load() < int64(rep.leftover) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for the restart to sync leftovers: %w", ctx.Err())
		}
		time.Sleep(d.gap)
	}
	rep.restartSynced = int(a.counts.Synced.Load())
	rep.restartQueue, _ = a.q.len()
	rep.restartManifest = d.onDisk(crashPages)

	// 3. A burst of edits, each announced by webhook, and two bad ones.
	for round := range burstRounds {
		for _, id := range demoPages {
			d.editPage(ctx, id)
		}
		switch round {
		case 1:
			d.send(ctx, []byte(`{"type":"page.content_updated","entity":{"id":"roadmap","type":"page"}}`), false)
		case 2:
			d.send(ctx, []byte(`{"type":"database.schema_updated","entity":{"id":"db1","type":"database"}}`), true)
		}
		time.Sleep(d.gap)
	}

	// 4. Graceful shutdown while pages are still queued.
	shutStart := time.Now()
	rep.queuedAtShutdown, _ = a.q.len()
	a.hook.stop()
	d.send(ctx, []byte(`{"type":"page.content_updated","entity":{"id":"okrs","type":"page"}}`), true)
	if err := a.shutdown(ctx); err != nil {
		return nil, fmt.Errorf("syncing the queue: %w", err)
	}
	<-running
	rep.shutdown, rep.took = time.Since(shutStart), time.Since(start)
	return rep, d.check(rep, crashed, a)
}

// editPage makes a new version of page id and announces it.
func (d *demo) editPage(ctx context.Context, id string) {
	d.fake.edit(id, time.Now())
	d.send(ctx, fmt.Appendf(nil, `{"type":"page.content_updated","entity":{"id":%q,"type":"page"}}`, id), true)
}

// send posts body, signed or not, and counts the answer.
func (d *demo) send(ctx context.Context, body []byte, signed bool) {
	sig := ""
	if signed {
		sig = hookhttp.Sign(d.cfg.Secret, body)
	}
	status, _ := d.post(ctx, body, sig) // 0 when it got no answer
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
