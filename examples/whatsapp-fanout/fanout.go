package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/window"
	"golang.org/x/sync/errgroup"
)

// fanout sends reminders for one run of the program. Per account it holds
// a lock for the whole fan-out of a reminder (one fan-out per account at a
// time) and draws every message from the account's token bucket; inside a
// fan-out up to Parallel groups are in flight, each sending its parts in
// order with a little jitter between them. Different accounts share
// nothing and run in parallel. The locks and buckets are this process's,
// or with -redis shared by every instance.
type fanout struct {
	cfg    config
	store  *store
	limits accountLimits
	locks  accountLocks
	media  *mediaCache

	mu  sync.Mutex
	rnd *rand.Rand
}

// result is what one run did with one reminder.
type result struct {
	ID, Account string
	Window      string // with its zone
	// Status is the reminder's status after the run: a final status,
	// "paused", or "interrupted" when the run was stopped from outside
	// before the window closed (the reminder stays resumable).
	Status   string
	Already  bool // the reminder was final before this run: nothing to do
	Tally    tally
	Closed   bool      // the window closed during the run, or was closed at its start
	NextOpen time.Time // when paused: when the window opens next
	Start    time.Time
	End      time.Time
	Err      error // why an interrupted run stopped, when not ctx
	// Counters of this run, updated atomically by the group goroutines.
	SentNow  int64 // parts sent
	Attempts int64 // send attempts
	Retries  int64
	// Duplicates counts the parts the service said it had delivered
	// before, and so suppressed: parts it had accepted that the state
	// file had not recorded when the program was stopped.
	Duplicates int64
	Media      int // media preparations of the account in this run
}

// errStopped means the window closes (or the run was stopped) before the
// message could go out: the part stays pending.
var errStopped = errors.New("stopped before the window closes")

// send runs reminder i of the progress under its account's lock. Holding
// it, it first reads the reminder's progress where the previous holder (in
// another instance, with -redis) left it, and before letting go it writes
// the progress, so the next holder finds it.
func (f *fanout) send(ctx context.Context, i int) result {
	var r reminder
	f.store.view(i, func(rs *reminderState) { r = rs.Reminder })
	res := result{ID: r.ID, Account: r.Account, Window: r.Window + " " + r.Zone, Status: statusInterrupted}
	err := f.locks.do(ctx, r.Account, func(ctx context.Context, fence uint64) error {
		if err := f.store.claim(ctx, i, fence); err != nil {
			return err
		}
		res = f.sendLocked(ctx, i, r)
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		return f.store.flush(wctx, i)
	})
	if err != nil && ctx.Err() == nil {
		// The progress could not be read or written, or the lock was
		// lost: what this run did may not be stored.
		res.Status, res.Err = statusInterrupted, err
	}
	if err != nil {
		res.Tally = f.tally(i)
	}
	return res
}

// flushTimeout bounds the write of a reminder's progress when its fan-out
// stops, even when it stops because the run was interrupted.
const flushTimeout = 10 * time.Second

const statusInterrupted = "interrupted"

func (f *fanout) sendLocked(ctx context.Context, i int, r reminder) (res result) {
	clk := f.cfg.Clock
	res = result{ID: r.ID, Account: r.Account, Window: r.Window + " " + r.Zone, Start: clk.Now()}
	defer func() { res.End, res.Tally, res.Media = clk.Now(), f.tally(i), f.media.count(r.Account) }()
	var status string
	f.store.view(i, func(rs *reminderState) { status = rs.Status })
	if final(status) {
		res.Status, res.Already = status, true
		return res
	}
	sched, err := r.schedule(clk)
	if err != nil { // validated when loaded
		panic(err)
	}
	if !sched.Contains(res.Start) {
		// Fired outside its window: nothing is sent now.
		res.Closed, res.Status = true, f.resolve(i, true)
		if res.Status == statusPaused {
			res.NextOpen = nextOpen(sched, res.Start)
		}
		return res
	}
	wctx, cancel := sched.Context(ctx)
	defer cancel()
	var pending []int
	f.store.update(i, func(rs *reminderState) {
		rs.Runs++
		rs.Status = statusRunning
		for j, g := range rs.Groups {
			if g.Status == groupPending {
				pending = append(pending, j)
			}
		}
	})
	var eg errgroup.Group
	eg.SetLimit(f.cfg.Parallel)
	for _, j := range pending {
		if wctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			f.group(wctx, i, j, r, &res)
			return nil
		})
	}
	eg.Wait()
	// Groups leave parts pending only when ctx ended, or when the window
	// closed or will close before their next message may go out.
	res.Closed = ctx.Err() == nil && (errors.Is(context.Cause(wctx), window.ErrOutside) || f.tally(i).Pending > 0)
	res.Status = f.resolve(i, res.Closed)
	if res.Status == "" {
		res.Status = statusInterrupted
	}
	if res.Status == statusPaused {
		res.NextOpen = nextOpen(sched, clk.Now())
	}
	return res
}

// nextOpen returns when s opens after the span that contains now, if any.
func nextOpen(s window.Schedule, now time.Time) time.Time {
	if s.Contains(now) {
		now = s.EndAt(now)
	}
	return s.NextOpen(now)
}

// group sends the parts of group j that are not sent yet, in order.
func (f *fanout) group(ctx context.Context, i, j int, r reminder, res *result) {
	var g groupState
	f.store.view(i, func(rs *reminderState) { g = rs.Groups[j] })
	for k := g.Parts; k < len(r.Parts); k++ {
		if k > 0 {
			if sleepCtx(ctx, f.cfg.Clock, f.jitter()) != nil {
				return
			}
		}
		m := message{Account: r.Account, Group: g.ID, Part: k, Text: r.Parts[k].Text, Key: partKey(r.ID, g.ID, k)}
		var err error
		if src := r.Parts[k].Media; src != "" {
			if m.Media, err = f.media.get(ctx, r.Account, src); err != nil && f.stopped(ctx) {
				err = errStopped
			}
		}
		if err == nil {
			err = f.deliver(ctx, m, res)
		}
		f.store.update(i, func(rs *reminderState) {
			g := &rs.Groups[j]
			switch {
			case err == nil:
				g.Parts = k + 1
				if g.Parts == len(r.Parts) {
					g.Status = groupSent
				}
			case errors.Is(err, errStopped) || ctx.Err() != nil:
				// Stays pending; the next run continues with part k.
			case isPermanent(err):
				g.Status, g.Err = groupSkipped, err.Error()
			default:
				g.Status, g.Err = groupFailed, err.Error()
			}
		})
		if err != nil {
			return
		}
		atomic.AddInt64(&res.SentNow, 1)
	}
}

// deliver sends one message: it takes a token from the account's bucket
// for every attempt and retries transient errors with doubling backoff. A
// 429 pauses the whole account's bucket for its Retry-After.
func (f *fanout) deliver(ctx context.Context, m message, res *result) error {
	backoff := f.cfg.Backoff
	for attempt := 1; ; attempt++ {
		if err := f.limits.Wait(ctx, m.Account); err != nil {
			// ctx ended, or the token comes after the window's close.
			return errStopped
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
		var ra *retryAfterError
		if errors.As(err, &ra) {
			if f.limits.PauseKey(ctx, m.Account, ra.wait) != nil {
				wait = ra.wait // at least this account's own sends wait
			} else {
				wait = 0
			}
		}
		if sleepCtx(ctx, f.cfg.Clock, wait) != nil {
			return errStopped
		}
		backoff *= 2
	}
}

// stopped reports whether ctx has ended or reached its deadline.
func (f *fanout) stopped(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !f.cfg.Clock.Now().Before(dl)
}

func (f *fanout) jitter() time.Duration {
	lo, hi := f.cfg.Jitter[0], f.cfg.Jitter[1]
	if hi <= lo {
		return lo
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return lo + time.Duration(f.rnd.Int64N(int64(hi-lo)))
}

func (f *fanout) tally(i int) tally {
	var t tally
	f.store.view(i, func(rs *reminderState) { t = rs.tally() })
	return t
}

// resolve sets reminder i's status by the rules of DESIGN section 5 and
// returns it ("" if the run was interrupted: the status stays running).
func (f *fanout) resolve(i int, closed bool) string {
	var s string
	f.store.update(i, func(rs *reminderState) {
		if s = resolveStatus(rs.tally(), closed); s != "" {
			rs.Status = s
		}
	})
	return s
}
