package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
)

// event is one hook invocation recorded in a session's state.
type event struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// state is what one session keeps on disk between processes. Pending holds
// the events not yet claimed, First and Last the arrival of the oldest and
// newest of them. InFlight is the batch claimed and not yet accepted by the
// remote: set while a processor runs, after a failed attempt, or after a
// processor died mid-batch; the next attempt sends it again, as it was.
// Fence is the last fencing token handed out.
type state struct {
	Pending  []event   `json:"pending,omitempty"`
	First    time.Time `json:"first,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	InFlight *claim    `json:"in_flight,omitempty"`
	Fence    uint64    `json:"fence,omitempty"`
}

// claim is a batch taken for processing, as its current attempt sends it.
//
// Key names the batch and stays the same on every attempt, so a remote that
// applies each key once never applies the batch twice. Fence grows with
// every attempt at any batch of the session, so a remote that refuses a
// fence below one it has seen never applies an attempt that a later one
// superseded, such as the request of a processor killed mid-delivery.
type claim struct {
	Key    string  `json:"key"`
	Run    string  `json:"run"`
	Fence  uint64  `json:"fence"`
	Reason string  `json:"reason"`
	Events []event `json:"events"`
	// Sending is set while an attempt is under way, and stays set if its
	// processor dies during it: the next one then recovers the batch.
	Sending bool `json:"sending,omitempty"`
}

// Why a batch was processed.
const (
	reasonQuiet     = "quiet"
	reasonMaxWait   = "max-wait"
	reasonRecovered = "recovered"
)

// due returns when the pending events must be processed, and why: once the
// session has been quiet for quiet, but no later than maxWait after the
// first one.
func (s *state) due(quiet, maxWait time.Duration) (time.Time, string) {
	q := s.Last.Add(quiet)
	if m := s.First.Add(maxWait); maxWait > 0 && m.Before(q) {
		return m, reasonMaxWait
	}
	return q, reasonQuiet
}

// session names the files of one session in the state directory (see
// README.md): NAME.lock, NAME.state.json, NAME.run.lock and NAME.runs.jsonl.
// The lock files are never removed (see mutex.LockFile).
type session struct {
	id   string
	base string // dir + file-safe name
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`)

func newSession(dir, id string) session {
	name := id
	if !safeName.MatchString(id) {
		sum := sha256.Sum256([]byte(id))
		name = "h-" + hex.EncodeToString(sum[:16])
	}
	return session{id: id, base: filepath.Join(dir, name)}
}

func (s session) statePath() string { return s.base + ".state.json" }
func (s session) logPath() string   { return s.base + ".runs.jsonl" }

func (s session) load() (state, error) {
	var st state
	b, err := os.ReadFile(s.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	} else if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("session %s: %w", s.id, err)
	}
	return st, nil
}

// save replaces the state file atomically: a reader or a crash sees the old
// state or the new one, never a torn write.
func (s session) save(st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.statePath(), b, 0o600)
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
			if c.Sending {
				c.Reason = reasonRecovered
			}
		case len(st.Pending) == 0 || own != "" && !slices.ContainsFunc(st.Pending, func(e event) bool { return e.ID == own }):
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
		c.Run, c.Fence, c.Sending = rand.Text(), st.Fence, true
		st.InFlight = c
		return true, appendLog(s.logPath(), logEntry{Op: "start", Run: c.Run, At: now, Batch: c})
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
		end := logEntry{Op: "end", Run: c.Run, At: time.Now()}
		if derr != nil {
			end.Err = derr.Error()
			st.InFlight.Sending = false
		} else {
			st.InFlight = nil
		}
		return true, appendLog(s.logPath(), end)
	})
}
