package pacer

import (
	"context"
	"errors"
	"time"

	"github.com/pacerkit/pacer/debounce"
	"github.com/pacerkit/pacer/internal/adaptive"
)

// intake debounces the values given to Add and hands each burst to ready.
// It is one debounce.Keyed; with Adaptive, each burst opens with the
// adaptive quiet period of its moment (AddWait) and keeps it, so a key's
// bursts stay one at a time and in order.
type intake[K comparable, V any] struct {
	d      *debounce.Keyed[K, V]
	adapt  *adaptive.Wait
	now    func() time.Time
	queued func() int // backlog, for the adaptive quiet period
}

func newIntake[K comparable, V any](cfg debounce.Config, adapt *adaptive.Wait, now func() time.Time, queued func() int, ready func(K, debounce.Burst[V])) (*intake[K, V], error) {
	d, err := debounce.New(cfg, ready)
	if err != nil {
		return nil, err
	}
	return &intake[K, V]{d: d, adapt: adapt, now: now, queued: queued}, nil
}

// add debounces v for key. It returns ErrClosed after close.
func (in *intake[K, V]) add(key K, v V) error {
	if in.adapt == nil {
		return closedErr(in.d.Add(key, v))
	}
	// The quiet period applies only if v opens a burst, but reading it
	// every time also keeps the pressure up to date with the backlog.
	return closedErr(in.d.AddWait(key, v, in.adapt.WaitAt(in.now(), in.queued())))
}

// pending returns the number of keys with an open burst.
func (in *intake[K, V]) pending() int { return in.d.Pending() }

// close stops intake and fires every open burst at once.
func (in *intake[K, V]) close() {
	// Flushing only runs fire, which never blocks, so Shutdown returns
	// promptly and needs no deadline.
	_ = in.d.Shutdown(context.Background())
}

func closedErr(err error) error {
	if errors.Is(err, debounce.ErrClosed) {
		return ErrClosed
	}
	return err
}
