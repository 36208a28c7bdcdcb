package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
)

// A tracker follows every message from publish to its outcome, on the
// dispatcher's side, and keeps per-subscription figures: queue depth,
// retries, blocked time (a FIFO subscription's head failing while the
// messages behind it wait) and the longest time a ready message waited
// to be sent, which is where one subscription holding up another would
// show.
type tracker struct {
	mu       sync.Mutex
	start    time.Time
	names    []string // subscriptions in configuration order
	subs     map[string]*subStats
	msgs     map[msgID]*msgState
	current  map[key]*msgState // the message each Runner key is handling
	letters  []deadLetter
	outcomes []outcome
	panics   []msgID
	open     int           // messages published and without an outcome yet
	changed  chan struct{} // closed and replaced at every outcome
}

type msgID struct {
	sub string
	seq uint64
}

type msgState struct {
	m         message
	key       key       // the Runner key it is handled under
	ready     time.Time // when it could start: published, or its retry was due
	firstFail time.Time // start of its first failed attempt
	attempts  int       // requests sent
}

type subStats struct {
	sub                                 subscription
	published, delivered, dead, retries int
	depth, maxDepth                     int
	blocked                             time.Duration
	blockedSpans                        []span
	maxWait                             time.Duration
	lastDone                            time.Time // the previous message's outcome, for FIFO
	firstDeadAt                         time.Time
}

type span struct{ from, to time.Time }

// A deadLetter is a message that was given up.
type deadLetter struct {
	Sub      string
	Seq      uint64
	Event    Event
	Attempts int
	Err      error
	At       time.Duration // since the tracker started
}

type outcome struct {
	sub string
	at  time.Time
}

func newTracker(subs []subscription) *tracker {
	t := &tracker{
		start:   time.Now(),
		subs:    map[string]*subStats{},
		msgs:    map[msgID]*msgState{},
		current: map[key]*msgState{},
		changed: make(chan struct{}),
	}
	for _, s := range subs {
		t.names = append(t.names, s.Name)
		t.subs[s.Name] = &subStats{sub: s}
	}
	return t
}

func (t *tracker) published(m message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs[msgID{m.Sub, m.Seq}] = &msgState{m: m, ready: m.Published}
	s := t.subs[m.Sub]
	s.published++
	s.depth++
	s.maxDepth = max(s.maxDepth, s.depth)
	t.open++
}

// started records a handler call for m beginning on the Runner key k.
func (t *tracker) started(k key, m message) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.msgs[msgID{m.Sub, m.Seq}]
	if st == nil {
		return // not published through this tracker
	}
	t.current[k] = st
	st.key = k
	s := t.subs[m.Sub]
	ready := st.ready
	if s.sub.FIFO && s.lastDone.After(ready) {
		ready = s.lastDone // it could not go before the message ahead of it
	}
	s.maxWait = max(s.maxWait, now.Sub(ready))
}

// sent counts a request for m and returns its number: 1 for the first.
func (t *tracker) sent(m message) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.msgs[msgID{m.Sub, m.Seq}]
	if st == nil {
		return 1
	}
	st.attempts++
	return st.attempts
}

// event is the Runners' OnEvent: it sees retries, including those of a
// handler that panicked.
func (t *tracker) event(ev pacer.Event[key]) {
	if ev.Kind != pacer.EventRetry {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.current[ev.Key]
	if st == nil {
		return
	}
	t.subs[st.m.Sub].retries++
	if st.firstFail.IsZero() {
		st.firstFail = ev.Time.Add(-ev.Duration)
	}
	st.ready = ev.Time.Add(ev.Delay)
	var p *pacer.PanicError
	if errors.As(ev.Err, &p) {
		t.panics = append(t.panics, msgID{st.m.Sub, st.m.Seq})
	}
}

// panicked returns how many handler calls for m panicked in this process.
func (t *tracker) panicked(m message) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, id := range t.panics {
		if id == (msgID{m.Sub, m.Seq}) {
			n++
		}
	}
	return n
}

func (t *tracker) delivered(m message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.subs[m.Sub] == nil {
		return // stored by a dispatcher with other subscriptions
	}
	t.subs[m.Sub].delivered++
	t.finish(m, time.Now())
}

func (t *tracker) dead(m message, err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.subs[m.Sub]
	if s == nil {
		return // stored by a dispatcher with other subscriptions
	}
	s.dead++
	if s.firstDeadAt.IsZero() {
		s.firstDeadAt = now
	}
	attempts := 0
	if st := t.msgs[msgID{m.Sub, m.Seq}]; st != nil {
		attempts = st.attempts
	}
	t.letters = appendCapped(t.letters, deadLetter{Sub: m.Sub, Seq: m.Seq, Event: m.Event, Attempts: attempts, Err: err, At: now.Sub(t.start)})
	t.finish(m, now)
}

// lost records a message the dispatcher could not queue (it was shutting
// down) as dead.
func (t *tracker) lost(m message) { t.dead(m, pacer.ErrClosed) }

// finish records m's outcome. A message this tracker did not see
// published (another dispatcher on the same Store published it, or this
// one before a restart) counts as delivered or dead, and leaves the queue
// depth and the open messages alone.
func (t *tracker) finish(m message, now time.Time) {
	id := msgID{m.Sub, m.Seq}
	st := t.msgs[id]
	delete(t.msgs, id)
	s := t.subs[m.Sub]
	if st != nil {
		s.depth--
		t.open--
	}
	s.lastDone = now
	if st != nil && !st.firstFail.IsZero() {
		s.blocked += now.Sub(st.firstFail)
		s.blockedSpans = appendCapped(s.blockedSpans, span{st.firstFail, now})
	}
	if st != nil && t.current[st.key] == st {
		delete(t.current, st.key)
	}
	t.outcomes = appendCapped(t.outcomes, outcome{m.Sub, now})
	close(t.changed)
	t.changed = make(chan struct{})
}

// maxHistory bounds the lists a tracker keeps for the report (dead letters,
// outcomes, blocked spans), so that a long real run does not grow without
// end; the counters stay exact.
const maxHistory = 100_000

func appendCapped[T any](s []T, v T) []T {
	if len(s) >= maxHistory {
		return s
	}
	return append(s, v)
}

// waitIdle waits until every published message has an outcome.
func (t *tracker) waitIdle(ctx context.Context) error {
	for {
		t.mu.Lock()
		open, changed := t.open, t.changed
		t.mu.Unlock()
		if open == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d messages: %w", open, ctx.Err())
		case <-changed:
		}
	}
}

// A snapshot is a copy of what a tracker knows.
type snapshot struct {
	subs     []subStats // in configuration order
	letters  []deadLetter
	outcomes []outcome
	panics   []msgID
}

func (t *tracker) snapshot() snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := snapshot{
		letters:  append([]deadLetter(nil), t.letters...),
		outcomes: append([]outcome(nil), t.outcomes...),
		panics:   append([]msgID(nil), t.panics...),
	}
	for _, name := range t.names {
		c := *t.subs[name]
		c.blockedSpans = append([]span(nil), c.blockedSpans...)
		s.subs = append(s.subs, c)
	}
	return s
}
