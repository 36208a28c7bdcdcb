package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

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
