package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer/redis/redismutex"
	"github.com/pacerkit/pacer/window"
)

// fanout sends reminders for one run of the program: each reminder under
// its account's lock (send), Parallel groups in flight (sendLocked), a
// group's parts in order with jitter between them (group).
type fanout struct {
	cfg   config
	store *store
	media *mediaCache
}

// result is what one run did with one reminder.
type result struct {
	ID, Account string
	Window      string // with its zone
	Status      string // after the run: final, paused, or interrupted (stopped from outside; resumable)
	Already     bool   // the reminder was final before this run: nothing to do
	Tally       tally
	Closed      bool      // the window closed during the run, or was closed at its start
	NextOpen    time.Time // when paused: when the window opens next
	Start, End  time.Time
	Err         error // why an interrupted run stopped, when not ctx
	// This run's counters, updated atomically. Duplicates are parts the
	// service had delivered before (not yet recorded when a run stopped).
	SentNow, Attempts, Retries, Duplicates int64
	Media                                  int // media preparations of the account in this run
}

const statusInterrupted = "interrupted"

// errStopped means the window closes (or the run was stopped) before the
// message could go out: the part stays pending.
var errStopped = errors.New("stopped before the window closes")

// send runs reminder i under its account's lock: it reads the reminder's
// progress as the previous holder (with -redis, of any instance) left it,
// and writes it before letting go, even when the run was interrupted.
func (f *fanout) send(ctx context.Context, i int) result {
	var r reminder
	f.store.view(i, func(rs *reminderState) { r = rs.Reminder })
	res := result{ID: r.ID, Account: r.Account, Window: r.Window + " " + r.Zone, Status: statusInterrupted, Start: f.cfg.Clock.Now()}
	err := f.cfg.Locks.Do(ctx, r.Account, func(ctx context.Context) error {
		fence, _ := redismutex.FenceFrom(ctx) // 0 with a lock of this process
		if err := f.store.claim(ctx, i, fence); err != nil {
			return err
		}
		f.sendLocked(ctx, i, r, &res)
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
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

func (f *fanout) tally(i int) (t tally) {
	f.store.view(i, func(rs *reminderState) { t = rs.tally() })
	return t
}

// begin marks reminder i running and returns its pending groups.
func (f *fanout) begin(i int) (pending []int) {
	f.store.update(i, func(rs *reminderState) {
		rs.Status = statusRunning
		for j, g := range rs.Groups {
			if g.Status == groupPending {
				pending = append(pending, j)
			}
		}
	})
	return pending
}

// stop sets reminder i's status by the rules (resolveStatus) now that its
// run has stopped, and completes res; an interrupted run stays running.
func (f *fanout) stop(i int, res *result, sched window.Schedule, closed bool) {
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
}

// stopped reports whether ctx has ended or reached its deadline.
func (f *fanout) stopped(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !f.cfg.Clock.Now().Before(dl)
}

func (f *fanout) jitter() time.Duration {
	if lo, hi := f.cfg.Jitter[0], f.cfg.Jitter[1]; hi > lo {
		return lo + rand.N(hi-lo)
	}
	return f.cfg.Jitter[0]
}

// sleepCtx waits for d on clk, or until ctx ends.
func sleepCtx(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// mediaCache prepares each media item of an account once per run: the
// first group to need it prepares it, the others wait for that result,
// success or error. One cut short by ctx is forgotten.
type mediaCache struct {
	sender   sender
	mu       sync.Mutex
	items    map[[2]string]*mediaItem // by account and source
	prepared map[string]int           // preparations started, by account
}

type mediaItem struct {
	done   chan struct{} // closed once handle and err are set
	handle string
	err    error
}

func (c *mediaCache) get(ctx context.Context, account, src string) (string, error) {
	key := [2]string{account, src}
	c.mu.Lock()
	it, ok := c.items[key]
	if !ok {
		it = &mediaItem{done: make(chan struct{})}
		c.items[key], c.prepared[account] = it, c.prepared[account]+1
	}
	c.mu.Unlock()
	if !ok {
		it.handle, it.err = c.sender.PrepareMedia(ctx, account, src)
		if ctx.Err() != nil {
			c.mu.Lock()
			delete(c.items, key)
			c.mu.Unlock()
		}
		close(it.done)
	}
	select {
	case <-it.done:
		return it.handle, it.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// count returns how many media preparations the run started for account.
func (c *mediaCache) count(account string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prepared[account]
}
