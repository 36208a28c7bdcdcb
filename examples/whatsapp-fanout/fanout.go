package main

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/redismutex"
	"github.com/pacerkit/pacer/window"
)

// fanout sends reminders for one run of the program: a reminder under its
// account's lock (send), through a Runner of its own (sendLocked).
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
		if err := f.sendLocked(ctx, i, r, &res); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return f.store.flush(wctx, i)
	})
	if err != nil {
		f.store.view(i, func(rs *reminderState) { res.Tally = rs.tally() })
		if ctx.Err() == nil { // the progress could not be read or written, or the lock was lost
			res.Status, res.Err = statusInterrupted, err
		}
	}
	return res
}

// handle is the Runner's handler: it sends batch, groups of reminder i,
// one after the other. A group that fails is retried with the batch; one
// the service refuses is skipped. At the window's close it waits for the
// Runner's cut, which defers the batch without using an attempt.
func (f *fanout) handle(ctx context.Context, i int, res *result, batch []int) error {
	paid := true // the Runner took this call's token from the account's bucket (Config.KeyLimit)
	var first error
	for _, j := range batch {
		err := f.group(ctx, i, res, j, &paid)
		var ra *retryAfterError
		switch {
		case err == nil:
		case f.stopped(ctx):
			<-ctx.Done() // the window closes, or the run stops: cut by the Runner
			return ctx.Err()
		case errors.As(err, &ra):
			return pacer.RetryAfter(err, ra.wait) // pauses the account's bucket (KeyLimit.PauseKeyFor)
		default:
			first = cmp.Or(first, err)
		}
	}
	return first
}

// dropped is the Runner's OnDrop: a batch that used up its attempts fails
// its groups still pending. What the Runner drops at its Shutdown
// (ErrClosed) stays pending for the next run.
func (f *fanout) dropped(i int, batch []int, err error) {
	for _, j := range batch {
		if !errors.Is(err, pacer.ErrClosed) {
			f.finish(i, j, groupFailed, err)
		}
	}
}

// group sends the parts of group j that are not sent yet, in order, and
// counts the tries in the run's result.
func (f *fanout) group(ctx context.Context, i int, res *result, j int, paid *bool) error {
	var g groupState
	var r reminder
	f.store.view(i, func(rs *reminderState) { g, r = rs.Groups[j], rs.Reminder })
	for k := g.Parts; g.Status == groupPending && k < len(r.Parts); k++ {
		if k > 0 && sleepCtx(ctx, f.cfg.Clock, f.jitter()) != nil {
			return ctx.Err()
		}
		m := message{Account: r.Account, Group: g.ID, Part: k, Text: r.Parts[k].Text, Key: partKey(r.ID, g.ID, k)}
		var err error
		if src := r.Parts[k].Media; src != "" {
			m.Media, err = f.media.get(ctx, r.Account, src)
		}
		if err == nil {
			err = f.takeToken(ctx, r.Account, paid)
		}
		duplicate := false
		if err == nil {
			atomic.AddInt64(&res.Attempts, 1)
			duplicate, err = f.cfg.Sender.Send(ctx, m)
		}
		switch {
		case err == nil && duplicate:
			atomic.AddInt64(&res.Duplicates, 1)
		case err == nil:
		case f.stopped(ctx):
			return err // stays pending, at part k
		case isPermanent(err):
			f.finish(i, j, groupSkipped, err)
			return nil
		default:
			atomic.AddInt64(&res.Retries, 1) // sent again with its batch's retry
			return err
		}
		f.store.update(i, func(rs *reminderState) { rs.Groups[j].Parts = k + 1 })
		atomic.AddInt64(&res.SentNow, 1)
	}
	f.finish(i, j, groupSent, nil)
	return nil
}

// takeToken takes a token of account's bucket for the next send: the
// call's first send has the one the Runner took; the others ask the
// bucket, and sleep until it has one.
func (f *fanout) takeToken(ctx context.Context, account string, paid *bool) error {
	if *paid {
		*paid = false
		return nil
	}
	wait, err := f.cfg.Limits.TakeKey(ctx, account)
	for ; err == nil && wait > 0; wait, err = f.cfg.Limits.TakeKey(ctx, account) {
		if err := sleepCtx(ctx, f.cfg.Clock, wait); err != nil {
			return err
		}
	}
	return err
}

// finish records group j's end with status, if it was pending.
func (f *fanout) finish(i, j int, status string, err error) {
	f.store.update(i, func(rs *reminderState) {
		if g := &rs.Groups[j]; g.Status == groupPending {
			g.Status = status
			if err != nil {
				g.Err = err.Error()
			}
		}
	})
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
	if res.Status == statusPaused { // the opening after the span that closed, or is open
		res.NextOpen = sched.NextOpen(sched.EndAt(f.cfg.Clock.Now()))
	}
}

// stopped reports whether ctx has ended or reached its deadline.
func (f *fanout) stopped(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !f.cfg.Clock.Now().Before(dl)
}

func (f *fanout) jitter() time.Duration {
	lo, hi := f.cfg.Jitter[0], f.cfg.Jitter[1] // validated: 0 <= lo <= hi
	return lo + rand.N(hi-lo+1)
}

// sleepCtx waits for d on clk, or until ctx ends.
func sleepCtx(ctx context.Context, clk clock.Clock, d time.Duration) error {
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

// mediaItem is one preparation: handle and err are set once done is closed.
type mediaItem struct {
	done   chan struct{}
	handle string
	err    error
}

func (c *mediaCache) get(ctx context.Context, account, src string) (string, error) {
	key := [2]string{account, src}
	c.mu.Lock()
	it, found := c.items[key]
	if !found {
		it = &mediaItem{done: make(chan struct{})}
		c.items[key], c.prepared[account] = it, c.prepared[account]+1
		defer close(it.done)
	}
	c.mu.Unlock()
	if found {
		select {
		case <-it.done:
			return it.handle, it.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if it.handle, it.err = c.sender.PrepareMedia(ctx, account, src); ctx.Err() != nil {
		c.mu.Lock()
		delete(c.items, key)
		c.mu.Unlock()
	}
	return it.handle, it.err
}

// count returns how many media preparations the run started for account.
func (c *mediaCache) count(account string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prepared[account]
}
