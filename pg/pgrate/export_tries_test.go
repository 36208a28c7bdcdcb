package pgrate

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacerkit/pacer/internal/flight"
)

// HeldTries makes the TakeKey calls of a Keyed fly one at a time, the
// first held until the test calls Open, so that the test decides which
// calls share a flight; it records the keys of each flight of several.
type HeldTries struct {
	k       *Keyed
	gate    chan struct{}
	entered chan struct{}
	mu      sync.Mutex
	flights [][]string
}

// A Taken is what one TakeKey returned.
type Taken struct {
	Wait time.Duration
	Err  error
}

// HoldTries holds k's TakeKey calls; see HeldTries.
func HoldTries(k *Keyed) *HeldTries {
	h := &HeldTries{k: k, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	g := &k.flights.tries
	one, many := g.One, g.Many
	k.flights.tries = flight.Group[[]byte, time.Duration]{
		MaxFlying: 1,
		One: func(ctx context.Context, key []byte) (time.Duration, error) {
			select {
			case h.entered <- struct{}{}:
			default:
			}
			<-h.gate
			return one(ctx, key)
		},
		Many: func(ctx context.Context, keys [][]byte) ([]time.Duration, error) {
			var ks []string
			for _, k := range keys {
				ks = append(ks, string(k))
			}
			h.mu.Lock()
			h.flights = append(h.flights, ks)
			h.mu.Unlock()
			return many(ctx, keys)
		},
	}
	return h
}

// Lead calls TakeKey(ctx, key), which is to fly first and be held, and
// returns once it is.
func (h *HeldTries) Lead(t *testing.T, ctx context.Context, key string) <-chan Taken {
	t.Helper()
	done := h.call(ctx, key)
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first call did not fly")
	}
	return done
}

// Queue calls TakeKey(ctx, key) and returns once it waits behind the
// calls before it, so that calls come in the order they are queued.
func (h *HeldTries) Queue(t *testing.T, ctx context.Context, key string) <-chan Taken {
	t.Helper()
	waiting := h.k.flights.tries.Waiting()
	done := h.call(ctx, key)
	deadline := time.Now().Add(5 * time.Second)
	for h.k.flights.tries.Waiting() != waiting+1 {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not come to wait", key)
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

// Open lets the held call go.
func (h *HeldTries) Open() { close(h.gate) }

// Seen returns the keys of each flight of several so far.
func (h *HeldTries) Seen() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.flights)
}

func (h *HeldTries) call(ctx context.Context, key string) <-chan Taken {
	done := make(chan Taken, 1)
	go func() {
		w, err := h.k.TakeKey(ctx, key)
		done <- Taken{w, err}
	}()
	return done
}
