// Command hook-ingest debounces hook events across processes. A hook runner
// starts one process per event:
//
//	hook-ingest event -session S [-event ID]
//
// Each process records its event in the session's state file, then waits
// for the session's processing lock; holding it, it delivers the pending
// events as one batch once the session has been quiet for -quiet, or its
// oldest pending event is -max-wait old. Both locks are mutex.LockFile
// (flock), which the kernel releases when a process dies: a crash leaves no
// lock behind, and the next process delivers the dead one's batch.
//
// This file holds the locks and the loop; session.go keeps the state and
// takes and ends batches, deliver.go sends them, cli.go reads the command
// line. Without arguments the program plays a demo (demo.go) against a
// fake remote (remote.go) and checks it (report.go).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/pacerkit/pacer/mutex"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code, err := dispatch(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hook-ingest:", err)
	}
	os.Exit(code)
}

// params are the settings of an event or drain process.
type params struct {
	Quiet   time.Duration // process once the session was quiet this long
	MaxWait time.Duration // but no later than this after its first pending event; 0 = no bound
	Deliver deliverFunc   // sends one batch
}

// deliverFunc sends one claimed batch of a session.
type deliverFunc func(ctx context.Context, session string, c claim) error

// retryDelay bounds the pause after a failed delivery: it doubles from the
// first value up to the second.
var retryDelay = [2]time.Duration{250 * time.Millisecond, 2 * time.Second}

// record appends the event id to the session's pending events. It takes
// only the state lock, never the processing lock, so it does not wait for
// a running processor.
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

// process waits for the session's processing lock and then delivers its
// pending events whenever they are due (quiet for p.Quiet, or p.MaxWait
// after the first), until the event own has been delivered; with own empty
// (drain) until nothing is pending. A batch left behind by a processor that
// died, or by a failed attempt, is delivered first.
//
// Every event's own process calls process, so an event that arrives while
// another process is delivering is delivered afterwards: by its own process,
// which gets the lock when the current processor is done, unless an earlier
// process already took it along in its batch.
func process(ctx context.Context, p params, s session, own string) error {
	unlock, err := mutex.LockFile(ctx, s.base+".run.lock")
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

// update runs fn on the session's state under the session's state lock,
// held only for this read-modify-write, and writes the result back
// atomically when fn reports a change.
func (s session) update(ctx context.Context, fn func(st *state) (changed bool, err error)) error {
	unlock, err := mutex.LockFile(ctx, s.base+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.load()
	if err != nil {
		return err
	}
	changed, err := fn(&st)
	if err != nil || !changed {
		return err
	}
	return s.save(st)
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
