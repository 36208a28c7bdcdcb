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

// A tracker follows every message from publish to outcome and keeps
// per-subscription figures: depth, retries, blocked time (a FIFO head
// failing while those behind it wait) and the longest a ready message
// waited to be sent, where one subscription holding up another would show.
type tracker struct {
	mu      sync.Mutex
	subs    []*subStats // in configuration order
	msgs    map[msgID]*msgState
	current map[key]*msgState // the message each Runner key is handling
	letters []deadLetter
	panics  []msgID
	open    int           // messages published and without an outcome yet
	changed chan struct{} // closed and replaced at every outcome
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
	blocked, maxWait                    time.Duration
	meanwhile                           int       // outcomes of the others while its head was failing
	lastDone                            time.Time // the previous message's outcome, for FIFO
}

// A deadLetter is a message that was given up.
type deadLetter struct {
	message
	Attempts int
	Err      error
}

func newTracker(subs []subscription) *tracker {
	t := &tracker{msgs: map[msgID]*msgState{}, current: map[key]*msgState{}, changed: make(chan struct{})}
	for _, s := range subs {
		t.subs = append(t.subs, &subStats{sub: s})
	}
	return t
}

// stats returns the figures of subscription name, nil for one this
// dispatcher does not have (a message stored by another). t.mu is held.
func (t *tracker) stats(name string) *subStats {
	if i := slices.IndexFunc(t.subs, func(s *subStats) bool { return s.sub.Name == name }); i >= 0 {
		return t.subs[i]
	}
	return nil
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

// started records the handler call for m's attempt-th request beginning
// on the Runner key k.
func (t *tracker) started(k key, m message, attempt int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.msgs[msgID{m.Sub, m.Seq}]
	if st == nil {
		return // not published through this tracker
	}
	t.current[k], st.key, st.attempts = st, k, attempt
	s, ready := t.stats(m.Sub), st.ready
	if s.sub.FIFO && s.lastDone.After(ready) {
		ready = s.lastDone // it could not go before the message ahead of it
	}
	s.maxWait = max(s.maxWait, time.Since(ready))
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

// finish records m's outcome: delivered if err is nil, else dead. One
// published elsewhere (by another dispatcher on the Store, or before a
// restart) leaves the depth and the open messages alone.
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
		l := deadLetter{message: m, Err: err}
		if st != nil {
			l.Attempts = st.attempts
		}
		t.letters = appendCapped(t.letters, l)
	}
	s.lastDone = now
	for _, o := range t.subs { // the FIFO subscriptions whose head is failing now
		if h := t.current[fifoKey(o.sub.Name)]; o != s && o.sub.FIFO && h != nil && !h.firstFail.IsZero() {
			o.meanwhile++
		}
	}
	if st != nil {
		s.depth--
		t.open--
		if !st.firstFail.IsZero() {
			s.blocked += now.Sub(st.firstFail)
		}
		if t.current[st.key] == st {
			delete(t.current, st.key)
		}
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// maxHistory bounds the dead letters kept for the report, so that a long
// real run does not grow without end; the counters stay exact.
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
	subs    []subStats // in configuration order
	letters []deadLetter
	panics  []msgID
}

func (t *tracker) snapshot() snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := snapshot{letters: slices.Clone(t.letters), panics: slices.Clone(t.panics)}
	for _, st := range t.subs {
		s.subs = append(s.subs, *st)
	}
	return s
}
