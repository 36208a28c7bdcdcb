// Command whatsapp-fanout sends reminders from accounts to many groups:
// one fan-out per account at a time (mutex.Keyed), a token per message from
// the account's bucket (ratelimit.Keyed), and a stop when the reminder's
// delivery window closes (window.Schedule). A state file keeps the
// progress; with -redis, instances share locks, buckets and progress.
// Without -reminders it plays a demo against a fake service. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/pacerkit/pacer/mutex"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/window"
	"golang.org/x/sync/errgroup"
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
		cfg.Locks = &mutex.Keyed[string]{} // waiters take turns in arrival order
		cfg.Limits = func(account string) limiter { return limits.For(account) }
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

// sendLocked sends the pending groups of reminder i, Parallel at a time,
// until they are done or the window closes. The account's lock is held.
func (f *fanout) sendLocked(ctx context.Context, i int, r reminder, res *result) {
	res.Start = f.cfg.Clock.Now()
	defer func() { res.End, res.Tally, res.Media = f.cfg.Clock.Now(), f.tally(i), f.media.count(r.Account) }()
	if f.store.view(i, func(rs *reminderState) { res.Status = rs.Status }); final(res.Status) {
		res.Already = true
		return
	}
	sched, _ := r.schedule(f.cfg.Clock) // validated when loaded
	if !sched.Contains(res.Start) {     // fired outside its window: nothing is sent now
		f.stop(i, res, sched, true)
		return
	}
	wctx, cancel := sched.Context(ctx) // cancelled at the window's close, with cause window.ErrOutside
	defer cancel()
	var eg errgroup.Group
	eg.SetLimit(f.cfg.Parallel)
	for _, j := range f.begin(i) {
		if wctx.Err() != nil {
			break
		}
		eg.Go(func() error { f.group(wctx, i, j, r, res); return nil })
	}
	eg.Wait()
	// Groups leave parts pending only when ctx ended, or when the window
	// closed or will close before their next message may go out.
	f.stop(i, res, sched, ctx.Err() == nil && (errors.Is(context.Cause(wctx), window.ErrOutside) || f.tally(i).Pending > 0))
}

// deliver sends one message: it takes a token from the account's bucket
// for every attempt and retries transient errors with doubling backoff. A
// 429 pauses the whole account's bucket for its Retry-After.
func (f *fanout) deliver(ctx context.Context, m message, res *result) error {
	bucket, backoff := f.cfg.Limits(m.Account), f.cfg.Backoff
	for attempt := 1; ; attempt++ {
		if err := bucket.Wait(ctx); err != nil {
			return errStopped // ctx ended, or the token comes after the window's close
		}
		atomic.AddInt64(&res.Attempts, 1)
		duplicate, err := f.cfg.Sender.Send(ctx, m)
		switch {
		case err == nil:
			if duplicate {
				atomic.AddInt64(&res.Duplicates, 1)
			}
			return nil
		case f.stopped(ctx):
			return errStopped
		case isPermanent(err) || attempt >= f.cfg.Attempts:
			return err
		}
		atomic.AddInt64(&res.Retries, 1)
		wait := backoff
		if ra := (*retryAfterError)(nil); errors.As(err, &ra) {
			// Every send of the account waits: in this process, and with
			// -redis in every instance that Redis reaches.
			bucket.PauseFor(ra.wait)
			wait = 0
		}
		if sleepCtx(ctx, f.cfg.Clock, wait) != nil {
			return errStopped
		}
		backoff *= 2
	}
}
