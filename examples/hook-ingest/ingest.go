package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// params are the settings of an event or drain process.
type params struct {
	Quiet   time.Duration // process once the session was quiet this long
	MaxWait time.Duration // but no later than this after its first pending event; 0 = no bound
	Deliver deliverFunc   // processes one batch
	// CrashOnce makes the first processor of each session kill itself
	// right after claiming a batch, to show that a dead processor leaves
	// no lock behind and that its batch is delivered by the next one.
	CrashOnce bool
}

// deliverFunc processes one claimed batch of a session.
type deliverFunc func(ctx context.Context, session string, c claim) error

// retryDelay bounds the pause after a failed delivery: it doubles from the
// first value up to the second.
var retryDelay = [2]time.Duration{250 * time.Millisecond, 2 * time.Second}

// record appends the event id to the session's pending events, stamped
// with the time it was recorded. It takes only the short state lock, never
// the processing lock, so it does not wait for a running processor.
func record(ctx context.Context, s session, id string) error {
	return s.update(ctx, func(st *state) (bool, error) {
		// Stamped under the lock, so arrivals are in order and Last
		// never moves back.
		e := event{ID: id, At: time.Now()}
		if len(st.Pending) == 0 {
			st.First = e.At
		}
		st.Pending = append(st.Pending, e)
		st.Last = e.At
		return true, nil
	})
}

// process waits for the session's processing lock and then processes its
// pending events whenever they are due (quiet for p.Quiet, or p.MaxWait
// after the first), until the event own has been delivered; with own empty
// (drain) until nothing is pending. A batch left behind by a processor that
// died is delivered first.
//
// Every event's own process calls process, so an event that arrives while
// another process is delivering is processed afterwards: by its own process,
// which gets the lock when the current processor is done, unless an earlier
// process already took it along in its batch.
func process(ctx context.Context, p params, s session, own string) error {
	unlock, err := s.lockRun(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	backoff := retryDelay[0]
	for {
		c, wait, done, err := claimDue(ctx, p, s, own)
		switch {
		case err != nil:
			return err
		case done:
			return nil
		case c == nil:
			if err := sleep(ctx, wait); err != nil {
				return err
			}
			continue
		}
		if p.CrashOnce && firstCrash(s) {
			// Die the hard way (SIGKILL): no deferred unlock runs,
			// the kernel drops the flock.
			if self, err := os.FindProcess(os.Getpid()); err == nil && self.Kill() == nil {
				<-ctx.Done() // the signal may take a moment to land
				return ctx.Err()
			}
		}
		derr := p.Deliver(ctx, s.id, *c)
		if err := finish(ctx, s, *c, derr); err != nil {
			return err
		}
		if derr == nil {
			backoff = retryDelay[0]
			continue
		}
		fmt.Fprintf(os.Stderr, "hook-ingest: session %s: %v (retrying in %v)\n", s.id, derr, backoff)
		if err := sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, retryDelay[1])
	}
}

// claimDue takes the batch to process now, if any: the batch in flight,
// or else the pending events once they are due. It gives the attempt the
// session's next fence and records the batch in the state as in flight and
// in the run log as started. Otherwise it returns how long to wait before
// the pending events are due, or done when there is nothing left for this
// process to do.
func claimDue(ctx context.Context, p params, s session, own string) (c *claim, wait time.Duration, done bool, err error) {
	err = s.update(ctx, func(st *state) (bool, error) {
		now := time.Now()
		switch {
		case st.InFlight != nil:
			// A failed attempt, or a processor that died during one:
			// send the same batch again, under its key.
			c = st.InFlight
			if c.Key == "" { // claimed by a version that named no batches
				c.Key = rand.Text()
			}
			if c.Sending {
				c.Reason = reasonRecovered
			}
		case len(st.Pending) == 0 || own != "" && !st.pending(own):
			done = true
			return false, nil
		default:
			due, reason := st.due(p.Quiet, p.MaxWait)
			if now.Before(due) {
				wait = due.Sub(now)
				return false, nil
			}
			c = &claim{Key: rand.Text(), Reason: reason, Events: st.Pending}
			st.Pending, st.First, st.Last = nil, time.Time{}, time.Time{}
		}
		st.Fence++
		c.Run, c.Fence, c.Sending = newRunID(), st.Fence, true
		st.InFlight = c
		return true, appendLog(s.logPath(), logEntry{
			Op: "start", Run: c.Run, PID: os.Getpid(), At: now, Key: c.Key, Fence: c.Fence, Reason: c.Reason, Events: c.Events,
		})
	})
	return c, wait, done, err
}

// finish records the end of an attempt. A delivered batch leaves the
// state; a failed one stays in flight, to be sent again as it was, under
// its key: had the remote applied it after all (an answer lost on the
// way), it must recognise the batch, so nothing may join it.
func finish(ctx context.Context, s session, c claim, derr error) error {
	return s.update(ctx, func(st *state) (bool, error) {
		if st.InFlight == nil || st.InFlight.Run != c.Run {
			// Only the holder of the processing lock claims or
			// finishes a batch, so this is a bug or a hand-edited state.
			return false, fmt.Errorf("session %s: run %s finished, but the batch in flight is %+v", s.id, c.Run, st.InFlight)
		}
		end := logEntry{Op: "end", Run: c.Run, PID: os.Getpid(), At: time.Now()}
		if derr != nil {
			end.Err = derr.Error()
			st.InFlight.Sending = false
		} else {
			st.InFlight = nil
		}
		return true, appendLog(s.logPath(), end)
	})
}

var runSeq atomic.Int64

// newRunID names a run uniquely on this host: process id and a counter.
func newRunID() string { return fmt.Sprintf("%d.%d", os.Getpid(), runSeq.Add(1)) }

// firstCrash reports whether this is the first crash requested for the
// session, creating its marker file.
func firstCrash(s session) bool {
	f, err := os.OpenFile(s.base+".crashed", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
