package main

import (
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

// state is what one session keeps on disk between processes.
//
// Pending holds the events not yet claimed, First and Last the arrival of
// the oldest and newest of them (the debounce deadlines derive from these).
// InFlight is the batch a processor has claimed and the remote has not yet
// accepted: it is empty except while a processor runs, after a failed
// attempt, or after a processor died mid-batch; the next attempt sends it
// again, as it was. Fence is the last fencing token handed out: every
// delivery attempt takes the next one.
type state struct {
	Pending  []event   `json:"pending,omitempty"`
	First    time.Time `json:"first,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	InFlight *claim    `json:"in_flight,omitempty"`
	Fence    uint64    `json:"fence,omitempty"`
}

// claim is a batch taken for processing, as its current attempt sends it.
//
// Key names the batch: it is made when the events are claimed and stays
// the same on every attempt, so a remote that applies each key once never
// applies the batch twice, however often it is sent. Fence grows with
// every attempt at any batch of the session, so a remote that refuses a
// fence below one it has seen never applies an attempt that a later one
// superseded, such as the request of a processor killed mid-delivery,
// still in flight when the next processor sends the batch again.
type claim struct {
	Key    string  `json:"key"`
	Run    string  `json:"run"`
	Fence  uint64  `json:"fence"`
	Reason string  `json:"reason"`
	Events []event `json:"events"`
	// Sending is set while an attempt is under way, and stays set if
	// its processor dies during it: the next one then recovers the batch.
	Sending bool `json:"sending,omitempty"`
}

// due returns when the pending events must be processed: once the session
// has been quiet for quiet, but no later than maxWait after the first one.
// It also names the deadline that applies.
func (s *state) due(quiet, maxWait time.Duration) (time.Time, string) {
	q := s.Last.Add(quiet)
	if maxWait > 0 {
		if m := s.First.Add(maxWait); m.Before(q) {
			return m, reasonMaxWait
		}
	}
	return q, reasonQuiet
}

func (s *state) pending(id string) bool {
	return slices.ContainsFunc(s.Pending, func(e event) bool { return e.ID == id })
}

// Why a batch was processed.
const (
	reasonQuiet     = "quiet"
	reasonMaxWait   = "max-wait"
	reasonRecovered = "recovered"
)

// session names the files of one session in the state directory:
//
//	NAME.lock        flock held for every read-modify-write of the state
//	NAME.state.json  the state, replaced atomically (temp file + rename)
//	NAME.run.lock    flock held by the one process that processes the session
//	NAME.runs.jsonl  append-only log of processing runs (start and end)
//
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
	}
	if err != nil {
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
