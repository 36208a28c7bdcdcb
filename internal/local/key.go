package local

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/fifo"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// note is what the Groups do not keep of a key's head batch and an
// operator reads (Key): the error of its last Retry or Hold, and since
// when it is held. A key has a note from its first Retry, Defer or Hold
// until its batch is acked, dropped or released, so the notes cost
// nothing while batches succeed: Ack and Drop look at the map only while
// some key has a note.
type note struct {
	err  string
	held time.Time // zero unless held
}

// note records key's note for outcome o, before the caller ends the
// lease in the Groups: a lease of the key that comes after that, and may
// be acked at once, then finds the note in place to remove. The lease is
// ended outside the notes' lock, for a Groups that was closed hands its
// values to a callback of the Runner's there.
func (e *Engine[K, V]) note(key K, o store.Outcome) {
	e.notesMu.Lock()
	defer e.notesMu.Unlock()
	n, had := e.notes[key]
	switch o.Kind {
	case store.Retry:
		n.err = o.Err
	case store.Hold:
		n.err, n.held = o.Err, e.clk.Now()
	case store.Defer:
		if !had { // nothing to keep: the attempt did not count
			return
		}
	}
	if e.notes == nil {
		e.notes = make(map[K]note)
	}
	e.notes[key] = n
	e.noted.Store(int64(len(e.notes)))
}

// unnote forgets key's note: its head batch was acked or dropped, by the
// lease the caller holds, so no other call changes the note meanwhile.
func (e *Engine[K, V]) unnote(key K) {
	if e.noted.Load() == 0 {
		return
	}
	e.notesMu.Lock()
	delete(e.notes, key)
	e.noted.Store(int64(len(e.notes)))
	e.notesMu.Unlock()
}

// Release implements engine.Engine: a released key's attempts, and so
// its note, start over.
func (e *Engine[K, V]) Release(_ context.Context, key K) (bool, error) {
	e.notesMu.Lock()
	defer e.notesMu.Unlock()
	if !e.g.Release(key) {
		return false, nil
	}
	delete(e.notes, key)
	e.noted.Store(int64(len(e.notes)))
	return true, nil
}

// Key implements engine.Engine. The Groups give the state of a key with
// values there, the debouncer that of a key whose only values are an
// open burst; the burst is read first, so that a burst closing meanwhile
// is seen in one place at least (and its values may count twice). Where
// the Groups keep no time, Since is zero: the engine reads no clock on a
// lease, to keep the clock off the path of every batch. A lease in the
// process never lapses, so a Leased key has no Until; its Holder is for
// the Runner to name. Ready keys ahead, and with tenants the tenants
// ahead, are counted up to store.MaxAhead.
// A key whose values all wait for a delayed one (PutAfter) is Scheduled
// until its first is due; the engine keeps no time of their Put, so its
// Oldest is zero.
// The queue in the process cannot be paused.
func (e *Engine[K, V]) Key(_ context.Context, key K) (engine.KeyState, error) {
	var open bool
	var b struct {
		n        int
		first    time.Time
		deadline time.Time
		maxWait  bool
	}
	if e.d != nil {
		if o, ok := e.d.Peek(key); ok {
			open = true
			b.n, b.first, b.deadline, b.maxWait = o.Count, o.First, o.Deadline, o.MaxWait
		}
	}
	waiting, due, lined := e.lineOf(key) // read before the Groups, as the burst
	e.notesMu.Lock()
	gi, queued := e.g.Key(key, store.MaxAhead)
	n := e.notes[key]
	e.notesMu.Unlock()

	var info store.KeyInfo
	switch {
	case queued:
		info = groupInfo(gi, n)
		if open {
			info.Values += b.n
		}
		info.Values += waiting
	case lined:
		info = store.KeyInfo{State: store.Scheduled, Until: due, Values: waiting}
	case open:
		info = store.KeyInfo{State: store.Debouncing, Until: b.deadline, MaxWait: b.maxWait, Values: b.n, Oldest: b.first}
	default:
		return engine.KeyState{}, nil
	}
	return engine.KeyState{Info: info, Found: true}, nil
}

// groupInfo turns a key's state in the Groups, and its note, into the
// terms of the store contract.
func groupInfo(gi fifo.KeyInfo, n note) store.KeyInfo {
	info := store.KeyInfo{Values: gi.Messages, Attempt: gi.Attempt, Err: n.err}
	if gi.Leases > 1 {
		info.Leases = gi.Leases // the store counts them only when several are out
	}
	switch gi.State {
	case fifo.KeyReady:
		// Whether the head batch was leased before, the Groups do not
		// tell: its Attempt is the next lease's.
		info.State, info.Ahead, info.TenantsAhead, info.Attempt = store.Ready, gi.Ahead, gi.TenantsAhead, 0
	case fifo.KeyLeased:
		info.State = store.Leased
	case fifo.KeyRetrying:
		info.State, info.Until = store.Retrying, gi.Due
		info.Attempt-- // the Groups tell the next lease's; the store the failed one's
	case fifo.KeyDeferred:
		info.State, info.Until = store.Deferred, gi.Due
	case fifo.KeyHeld:
		info.State, info.Since = store.Held, n.held
	}
	return info
}
