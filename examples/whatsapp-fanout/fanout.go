package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/redis/redismutex"
	"github.com/pacerkit/pacer/window"
)

// fanout sends reminders for one run of the program. Per account it holds
// a lock for the whole fan-out of a reminder and draws every message from
// the account's token bucket; inside a fan-out up to Parallel groups are
// in flight, each sending its parts in order with a little jitter between
// them. Different accounts share nothing and run in parallel.
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
	// before, and so suppressed: parts it had accepted that the progress
	// had not recorded when the program was stopped.
	Duplicates int64
	Media      int // media preparations of the account in this run
}

const statusInterrupted = "interrupted"

func (f *fanout) newResult(r reminder, status string) result {
	return result{ID: r.ID, Account: r.Account, Window: r.Window + " " + r.Zone, Status: status, Start: f.cfg.Clock.Now()}
}

// flushTimeout bounds the write of a reminder's progress when its fan-out
// stops, even when it stops because the run was interrupted.
const flushTimeout = 10 * time.Second

// errStopped means the window closes (or the run was stopped) before the
// message could go out: the part stays pending.
var errStopped = errors.New("stopped before the window closes")

// send runs reminder i under its account's lock. Holding it, it first reads
// the reminder's progress where the previous holder (another instance, with
// -redis) left it, and before letting go it writes the progress.
func (f *fanout) send(ctx context.Context, i int) result {
	r := f.reminder(i)
	res := f.newResult(r, statusInterrupted)
	err := f.locks.Do(ctx, r.Account, func(ctx context.Context) error {
		fence, _ := redismutex.FenceFrom(ctx) // 0 with a lock of this process
		if err := f.store.claim(ctx, i, fence); err != nil {
			return err
		}
		res = f.sendLocked(ctx, i, r)
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		return f.store.flush(wctx, i)
	})
	if err != nil {
		res.Tally = f.tally(i)
		if ctx.Err() == nil { // the progress could not be read or written, or the lock was lost
			res.Status, res.Err = statusInterrupted, err
		}
	}
	return res
}

// group sends the parts of group j that are not sent yet, in order.
func (f *fanout) group(ctx context.Context, i, j int, r reminder, res *result) {
	var g groupState
	f.store.view(i, func(rs *reminderState) { g = rs.Groups[j] })
	for k := g.Parts; k < len(r.Parts); k++ {
		if k > 0 && sleepCtx(ctx, f.cfg.Clock, f.jitter()) != nil {
			return
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
				if g.Parts = k + 1; g.Parts == len(r.Parts) {
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

// reminder returns reminder i of the progress.
func (f *fanout) reminder(i int) (r reminder) {
	f.store.view(i, func(rs *reminderState) { r = rs.Reminder })
	return r
}

// status returns reminder i's status.
func (f *fanout) status(i int) (s string) {
	f.store.view(i, func(rs *reminderState) { s = rs.Status })
	return s
}

// begin marks reminder i running and returns its pending groups.
func (f *fanout) begin(i int) (pending []int) {
	f.store.update(i, func(rs *reminderState) {
		rs.Runs++
		rs.Status = statusRunning
		for j, g := range rs.Groups {
			if g.Status == groupPending {
				pending = append(pending, j)
			}
		}
	})
	return pending
}

// stop sets reminder i's status by the rules (resolveStatus), now that its
// run has stopped, closed saying whether its window closed, and completes
// res. A run that was interrupted leaves the status running.
func (f *fanout) stop(i int, res result, sched window.Schedule, closed bool) result {
	res.Closed, res.Status = closed, statusInterrupted
	f.store.update(i, func(rs *reminderState) {
		if s := resolveStatus(rs.tally(), closed); s != "" {
			rs.Status, res.Status = s, s
		}
	})
	if res.Status == statusPaused {
		now := f.cfg.Clock.Now()
		if sched.Contains(now) {
			now = sched.EndAt(now)
		}
		res.NextOpen = sched.NextOpen(now)
	}
	return res
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

func (f *fanout) tally(i int) (t tally) {
	f.store.view(i, func(rs *reminderState) { t = rs.tally() })
	return t
}
