package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
)

// A tracker follows every message from publish to its outcome, on the
// dispatcher's side, and keeps per-subscription figures: queue depth,
// retries, blocked time (a FIFO subscription's head failing while the
// messages behind it wait) and the longest time a ready message waited to
// be sent, which is where one subscription holding up another would show.
type tracker struct {
	mu       sync.Mutex
	start    time.Time
	subs     []*subStats // in configuration order
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
	id        msgID
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
	t := &tracker{start: time.Now(), msgs: map[msgID]*msgState{}, current: map[key]*msgState{}, changed: make(chan struct{})}
	for _, s := range subs {
		t.subs = append(t.subs, &subStats{sub: s})
	}
	return t
}

// stats returns the figures of subscription name, nil for one this
// dispatcher does not have (a message stored by another). t.mu is held.
func (t *tracker) stats(name string) *subStats {
	i := slices.IndexFunc(t.subs, func(s *subStats) bool { return s.sub.Name == name })
	if i < 0 {
		return nil
	}
	return t.subs[i]
}

func (t *tracker) published(m message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := msgID{m.Sub, m.Seq}
	t.msgs[id] = &msgState{id: id, ready: m.Published}
	s := t.stats(m.Sub)
	s.published++
	s.depth++
	s.maxDepth = max(s.maxDepth, s.depth)
	t.open++
}

// started records a handler call for m beginning on the Runner key k.
func (t *tracker) started(k key, m message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.msgs[msgID{m.Sub, m.Seq}]
	if st == nil {
		return // not published through this tracker
	}
	t.current[k], st.key = st, k
	s, ready := t.stats(m.Sub), st.ready
	if s.sub.FIFO && s.lastDone.After(ready) {
		ready = s.lastDone // it could not go before the message ahead of it
	}
	s.maxWait = max(s.maxWait, time.Since(ready))
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

// event is the Runners' OnEvent: it sees retries, those of a handler that
// panicked included.
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
	t.stats(st.id.sub).retries++
	if st.firstFail.IsZero() {
		st.firstFail = ev.Time.Add(-ev.Duration)
	}
	st.ready = ev.Time.Add(ev.Delay)
	if p := (*pacer.PanicError)(nil); errors.As(ev.Err, &p) {
		t.panics = append(t.panics, st.id)
	}
}

// panicked returns how many handler calls for m panicked in this process.
func (t *tracker) panicked(m message) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return countOf(t.panics, msgID{m.Sub, m.Seq})
}

func (t *tracker) delivered(m message) { t.finish(m, nil) }

func (t *tracker) dead(m message, err error) { t.finish(m, err) }

// lost records a message the dispatcher could not queue (it was shutting
// down) as dead.
func (t *tracker) lost(m message) { t.finish(m, pacer.ErrClosed) }

// finish records m's outcome: delivered if err is nil, else dead. A message
// this tracker did not see published (another dispatcher on the same Store
// published it, or this one before a restart) leaves the queue depth and
// the open messages alone.
func (t *tracker) finish(m message, err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats(m.Sub)
	if s == nil {
		return
	}
	id := msgID{m.Sub, m.Seq}
	st := t.msgs[id]
	delete(t.msgs, id)
	if err == nil {
		s.delivered++
	} else {
		s.dead++
		l := deadLetter{Sub: m.Sub, Seq: m.Seq, Event: m.Event, Err: err, At: now.Sub(t.start)}
		if st != nil {
			l.Attempts = st.attempts
		}
		t.letters = appendCapped(t.letters, l)
	}
	s.lastDone = now
	if st != nil {
		s.depth--
		t.open--
		if !st.firstFail.IsZero() {
			s.blocked += now.Sub(st.firstFail)
			s.blockedSpans = appendCapped(s.blockedSpans, span{st.firstFail, now})
		}
		if t.current[st.key] == st {
			delete(t.current, st.key)
		}
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
	s := snapshot{letters: slices.Clone(t.letters), outcomes: slices.Clone(t.outcomes), panics: slices.Clone(t.panics)}
	for _, st := range t.subs {
		c := *st
		c.blockedSpans = slices.Clone(c.blockedSpans)
		s.subs = append(s.subs, c)
	}
	return s
}
