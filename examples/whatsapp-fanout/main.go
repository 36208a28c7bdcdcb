// Command whatsapp-fanout sends reminders from accounts to many groups:
// one fan-out per account at a time (mutex.Keyed), and within it a pacer
// Runner whose key is the reminder: Parallel groups of it at once
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
	"time"

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
	f := newFanout(cfg, st)
	runner, err := pacer.New(pacer.Config[string, int]{
		MaxBatch:  2,                                                         // two groups per call, one after the other
		PerKey:    cfg.Parallel,                                              // groups of a reminder (so of its account) in flight
		Workers:   cfg.Parallel * len(f.accounts),                            // every reminder's account busy at once
		KeyLimit:  accountGate{cfg.Limits, f.accounts},                       // the account's bucket: a token per call
		KeyWindow: func(id string) *window.Schedule { return f.windows[id] }, // the reminder's window
		Retry:     pacer.Backoff{Initial: cfg.Backoff, Attempts: cfg.Attempts},
		Clock:     cfg.Clock,
		OnDrop:    f.dropped,
	}, f.handle)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	f.runner = runner
	var wg sync.WaitGroup
	wg.Go(func() { _ = runner.Run(ctx) }) // ends with ctx, or with the Shutdown below
	fmt.Fprintf(out, "run at %s\n", cfg.Clock.Now().UTC().Format("Mon 02 Jan 15:04:05 MST"))
	results := make([]result, len(st.p.Reminders))
	var sends sync.WaitGroup
	for i := range results {
		sends.Go(func() { results[i] = f.send(ctx, i) })
	}
	sends.Wait()
	// What a paused or interrupted reminder left in the Runner stays pending
	// in the progress, for the next run: OnDrop ignores it (ErrClosed).
	now, cancel := context.WithCancel(context.Background())
	cancel()
	_ = runner.Shutdown(now)
	wg.Wait()
	printResults(out, results)
	return results, st.Close()
}

// sendLocked adds the pending groups of reminder i to the Runner and waits
// until they are done, or the window closes, or ctx ends. The account's
// lock is held.
func (f *fanout) sendLocked(ctx context.Context, i int, r reminder, res *result) {
	res.Start = f.cfg.Clock.Now()
	defer func() { res.End, res.Tally, res.Media = f.cfg.Clock.Now(), f.tally(i), f.media.count(r.Account) }()
	if f.store.view(i, func(rs *reminderState) { res.Status = rs.Status }); final(res.Status) {
		res.Already = true
		return
	}
	sched := *f.windows[r.ID]
	if !sched.Contains(res.Start) { // fired outside its window: nothing is sent now
		f.stop(i, res, sched, true)
		return
	}
	wctx, cancel := sched.WithClock(f.cfg.Clock).Context(ctx) // cancelled at the window's close, with cause window.ErrOutside
	defer cancel()
	rr := f.begin(i, r, res)
	for _, j := range rr.pending {
		if err := f.runner.Add(ctx, r.ID, j); err != nil {
			break // the Runner stops: ctx ended
		}
	}
	select {
	case <-rr.done:
	case <-wctx.Done():
	}
	rr.close() // the Runner cuts the handlers at the window's close: wait for them
	// Groups are left pending only when ctx ended, or when the window
	// closed or will close before their next message may go out.
	f.stop(i, res, sched, ctx.Err() == nil && (errors.Is(context.Cause(wctx), window.ErrOutside) || f.tally(i).Pending > 0))
}

// accountGate is the Runner's KeyLimit: the bucket of the reminder's
// account, shared by the reminders of the account (and, with -redis, by
// every instance).
type accountGate struct {
	buckets  ratelimit.KeyGate[string]
	accounts map[string]string // by reminder id
}

func (g accountGate) TakeKey(ctx context.Context, id string) (time.Duration, error) {
	return g.buckets.TakeKey(ctx, g.accounts[id])
}

func (g accountGate) PeekKey(ctx context.Context, id string) (time.Duration, error) {
	return g.buckets.PeekKey(ctx, g.accounts[id])
}

func (g accountGate) PauseKeyFor(ctx context.Context, id string, d time.Duration) error {
	return g.buckets.PauseKeyFor(ctx, g.accounts[id], d)
}
