// Command whatsapp-fanout sends reminders from accounts to many groups:
// one fan-out per account at a time (mutex.Keyed), each through a pacer
// Runner of its own keyed by the account: Parallel groups at once
// (Config.PerKey), a token per message from the account's bucket
// (Config.KeyLimit) and nothing outside the reminder's delivery window
// (Config.KeyWindow). A state file keeps the progress; with -redis,
// instances share locks, buckets and progress. Without -reminders it plays
// a demo against a fake service. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/mutex"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/window"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := start(ctx, os.Args[1:], os.Stdout, os.Stderr) // cli.go: the demo, or the reminders of -reminders
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "whatsapp-fanout:", err)
	}
	os.Exit(code)
}

// run is one run of the program: it sends every reminder that is not final
// yet, the accounts in parallel, until each is done, paused at its
// window's close, or interrupted by ctx.
func run(ctx context.Context, cfg config, out io.Writer) ([]result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	be := cfg.Progress
	if be == nil { // this process's own locks and buckets (fresh each run), and the state file
		limits, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: cfg.Rate / 60, Burst: cfg.Burst, Clock: cfg.Clock})
		if err != nil {
			return nil, err
		}
		cfg.Locks, cfg.Limits = &mutex.Keyed[string]{}, limits // lock waiters take turns in arrival order
		if be, err = openStateFile(ctx, cfg.State); err != nil {
			return nil, err
		}
	}
	st, err := openStore(ctx, be, cfg.Reminders, cfg.Clock, cfg.SaveEvery)
	if err != nil {
		return nil, err
	}
	f := &fanout{cfg: cfg, store: st, media: &mediaCache{sender: cfg.Sender, items: map[[2]string]*mediaItem{}, prepared: map[string]int{}}}
	fmt.Fprintf(out, "run at %s\n", cfg.Clock.Now().UTC().Format("Mon 02 Jan 15:04:05 MST"))
	results := make([]result, len(st.p.Reminders))
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = f.send(ctx, i) })
	}
	wg.Wait()
	printResults(out, results)
	return results, st.Close()
}

// sendLocked hands the pending groups of reminder i to a Runner and waits
// until they are done, or the window closes, or ctx ends. The account's
// lock is held.
func (f *fanout) sendLocked(ctx context.Context, i int, r reminder, res *result) error {
	res.Start = f.cfg.Clock.Now()
	defer func() {
		res.End, res.Media = f.cfg.Clock.Now(), f.media.count(r.Account)
		f.store.view(i, func(rs *reminderState) { res.Tally = rs.tally() })
	}()
	if f.store.view(i, func(rs *reminderState) { res.Status = rs.Status }); final(res.Status) {
		res.Already = true
		return nil
	}
	sched, _ := r.schedule(f.cfg.Clock) // validated when loaded
	if !sched.Contains(res.Start) {     // fired outside its window: nothing is sent now
		f.stop(i, res, sched, true)
		return nil
	}
	runner, err := pacer.New(pacer.Config[string, int]{ // one key, the account; values: the reminder's groups
		MaxBatch:  2,              // two groups per call, one after the other
		PerKey:    f.cfg.Parallel, // groups in flight: the account's, as it has one reminder at a time
		Workers:   f.cfg.Parallel,
		KeyLimit:  f.cfg.Limits,                                    // a token of the account's bucket per call
		KeyWindow: func(string) *window.Schedule { return &sched }, // the reminder's window cuts the calls at its close
		Retry:     pacer.Backoff{Initial: f.cfg.Backoff, Attempts: f.cfg.Attempts},
		Clock:     f.cfg.Clock,
		OnDrop:    func(_ string, batch []int, err error) { f.dropped(i, batch, err) },
	}, func(ctx context.Context, _ string, batch []int) error { return f.handle(ctx, i, res, batch) })
	if err != nil {
		return err
	}
	f.store.update(i, func(rs *reminderState) { // no worker runs before Shutdown starts them
		rs.Status = statusRunning
		for j, g := range rs.Groups {
			if g.Status == groupPending {
				_ = runner.Add(ctx, r.Account, j) // in the process: refused only once closed
			}
		}
	})
	wctx, cancel := sched.Context(ctx) // cancelled at the window's close, with cause window.ErrOutside
	defer cancel()
	// Shutdown handles every group, retries included, or, when the window
	// closes or ctx ends, stops at once: what is left stays pending.
	_ = runner.Shutdown(wctx)
	f.stop(i, res, sched, ctx.Err() == nil && errors.Is(context.Cause(wctx), window.ErrOutside))
	return nil
}
