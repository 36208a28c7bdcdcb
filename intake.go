package pacer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pacerkit/pacer/debounce"
)

// adaptiveLevels is the number of quiet periods an adaptive Runner switches
// between, evenly spaced from Config.Debounce to Adaptive.Max.
const adaptiveLevels = 4

// intake debounces the values given to Add and hands each burst to ready.
//
// Without Adaptive it is one debounce.Keyed. debounce.Keyed has one fixed
// quiet period, so an adaptive Runner keeps one debouncer per level and
// sends a key's values to the level chosen when its burst opened; a key with
// values pending in a level stays there until they fire, so its bursts keep
// their order.
type intake[K comparable, V any] struct {
	levels []*debounce.Keyed[K, V]
	waits  []time.Duration
	adapt  *adaptiveWait
	now    func() time.Time
	queued func() int // backlog, for the adaptive level

	mu   sync.Mutex
	open map[K]openBurst // with adapt only: keys with values pending, and where
}

type openBurst struct {
	level int
	n     int // values pending
}

func newIntake[K comparable, V any](cfg debounce.Config, adapt *adaptiveWait, now func() time.Time, queued func() int, ready func(K, debounce.Burst[V])) (*intake[K, V], error) {
	in := &intake[K, V]{adapt: adapt, now: now, queued: queued}
	n := 1
	if adapt != nil {
		n = adaptiveLevels
		in.open = make(map[K]openBurst)
	}
	for i := range n {
		c := cfg
		if adapt != nil {
			c.Wait = adapt.min + (adapt.max-adapt.min)*time.Duration(i)/time.Duration(n-1)
			if c.MaxWait > 0 && c.Wait > c.MaxWait {
				c.Wait = c.MaxWait // MaxWait bounds every burst
			}
		}
		fire := ready
		if adapt != nil {
			fire = func(key K, b debounce.Burst[V]) {
				// Queue first, then forget: until then the key's new values
				// join this level, behind this burst.
				ready(key, b)
				in.fired(key, len(b.Values))
			}
		}
		d, err := debounce.New(c, fire)
		if err != nil {
			in.close()
			return nil, err
		}
		in.levels = append(in.levels, d)
		in.waits = append(in.waits, c.Wait)
	}
	return in, nil
}

// add debounces v for key. It returns ErrClosed after close.
func (in *intake[K, V]) add(key K, v V) error {
	if in.adapt == nil {
		return closedErr(in.levels[0].Add(key, v))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	ob, ok := in.open[key]
	if !ok {
		ob.level = in.level(in.adapt.WaitAt(in.now(), in.queued()))
	}
	if err := in.levels[ob.level].Add(key, v); err != nil {
		return closedErr(err)
	}
	ob.n++
	in.open[key] = ob
	return nil
}

// level returns the level whose quiet period is closest to wait.
func (in *intake[K, V]) level(wait time.Duration) int {
	best := 0
	for i, w := range in.waits {
		if (w - wait).Abs() < (in.waits[best] - wait).Abs() {
			best = i
		}
	}
	return best
}

// fired forgets n pending values of key; it runs on a debouncer's goroutine,
// which holds no lock of the debouncer's while it calls fire.
func (in *intake[K, V]) fired(key K, n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ob := in.open[key]
	if ob.n -= n; ob.n <= 0 {
		delete(in.open, key)
	} else {
		in.open[key] = ob
	}
}

// pending returns the number of keys with an open burst.
func (in *intake[K, V]) pending() int {
	n := 0
	for _, d := range in.levels {
		n += d.Pending()
	}
	return n
}

// close stops intake and fires every open burst at once.
func (in *intake[K, V]) close() {
	for _, d := range in.levels {
		// Flushing only runs fire, which never blocks, so Shutdown returns
		// promptly and needs no deadline.
		_ = d.Shutdown(context.Background())
	}
}

func closedErr(err error) error {
	if errors.Is(err, debounce.ErrClosed) {
		return ErrClosed
	}
	return err
}
