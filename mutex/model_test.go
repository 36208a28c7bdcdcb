package mutex_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/pacerkit/pacer/mutex"
	"github.com/stretchr/testify/require"
)

// keyedModel is the reference: who holds each key and who waits, in order.
type keyedModel struct {
	holder  map[int]int   // key -> id of the holder
	waiters map[int][]int // key -> ids waiting, first in line first
}

// lock models a new Lock: it reports whether id holds the key at once.
func (md *keyedModel) lock(key, id int) bool {
	if _, held := md.holder[key]; held {
		md.waiters[key] = append(md.waiters[key], id)
		return false
	}
	md.holder[key] = id
	return true
}

// unlock models Unlock and returns the id the key was handed to, or -1.
func (md *keyedModel) unlock(key int) int {
	q := md.waiters[key]
	if len(q) == 0 {
		delete(md.holder, key)
		return -1
	}
	md.holder[key], md.waiters[key] = q[0], q[1:]
	return q[0]
}

// cancel models a waiter giving up; it reports whether id was waiting.
func (md *keyedModel) cancel(key, id int) bool {
	i := slices.Index(md.waiters[key], id)
	if i < 0 {
		return false
	}
	md.waiters[key] = slices.Delete(md.waiters[key], i, i+1)
	return true
}

// TestKeyedModel runs random sequences of Lock, LockContext, TryLock,
// Unlock, cancellations and invalid Unlocks on a few keys, one step at a
// time (synctest.Wait settles every goroutine after each step), and checks
// after every step that exactly the goroutines the model predicts acquired
// or gave up, in that order, and that Len matches.
//
// Odd seeds also hold many other keys during the first half of the run, so
// the keys under test overflow the shards' inline slots into their maps.
func TestKeyedModel(t *testing.T) {
	for seed := range 40 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				runKeyedModel(t, rand.New(rand.NewPCG(uint64(seed), 7)), 300, seed%2 == 1)
			})
		})
	}
}

func runKeyedModel(t *testing.T, rng *rand.Rand, steps int, crowded bool) {
	const keys = 4
	const ballast = 1000 // keys 1000..1999, never used by the model
	var m mutex.Keyed[int]
	lockBallast := func(lock bool) {
		for k := ballast; k < 2*ballast; k++ {
			if lock {
				require.True(t, m.TryLock(k))
			} else {
				m.Unlock(k)
			}
		}
	}
	extra := 0 // keys held by the ballast
	if crowded {
		lockBallast(true)
		extra = ballast
	}
	md := keyedModel{holder: map[int]int{}, waiters: map[int][]int{}}
	var acquired, gaveUp recorder
	type waiting struct {
		key    int
		cancel context.CancelFunc
	}
	cancellable := map[int]waiting{} // ids started with LockContext, not yet cancelled
	defer func() {
		for _, w := range cancellable {
			w.cancel()
		}
	}()
	nextID := 0

	for step := range steps {
		if extra > 0 && step == steps/2 {
			lockBallast(false)
			extra = 0
		}
		key := rng.IntN(keys)
		var wantAcquired, wantGaveUp []int
		switch op := rng.IntN(20); {
		case op < 7: // a new goroutine calls Lock or LockContext
			id := nextID
			nextID++
			if rng.IntN(2) == 0 {
				go func() { m.Lock(key); acquired.add(id) }()
			} else {
				ctx, cancel := context.WithCancel(context.Background())
				cancellable[id] = waiting{key, cancel}
				go func() {
					if err := m.LockContext(ctx, key); err != nil {
						require.ErrorIs(t, err, context.Canceled)
						gaveUp.add(id)
						return
					}
					acquired.add(id)
				}()
			}
			if md.lock(key, id) {
				wantAcquired = []int{id}
			}
		case op < 10: // TryLock from the test goroutine
			id := nextID
			nextID++
			_, held := md.holder[key]
			require.Equal(t, !held, m.TryLock(key), "step %d: TryLock(%d)", step, key)
			if !held {
				md.lock(key, id)
			}
		case op < 16: // Unlock a held key
			if _, held := md.holder[key]; !held {
				continue
			}
			m.Unlock(key)
			if id := md.unlock(key); id >= 0 {
				wantAcquired = []int{id}
			}
		case op < 19: // cancel a LockContext, waiting or already done
			if len(cancellable) == 0 {
				continue
			}
			ids := slices.Sorted(maps.Keys(cancellable))
			id := ids[rng.IntN(len(ids))]
			w := cancellable[id]
			delete(cancellable, id)
			w.cancel()
			if md.cancel(w.key, id) {
				wantGaveUp = []int{id}
			}
		default: // Unlock a free key
			if _, held := md.holder[key]; held {
				continue
			}
			require.PanicsWithValue(t, "mutex: Unlock of unlocked key", func() { m.Unlock(key) })
		}
		synctest.Wait()
		require.Equal(t, wantAcquired, acquired.take(), "step %d: acquired", step)
		require.Equal(t, wantGaveUp, gaveUp.take(), "step %d: gave up", step)
		require.Equal(t, len(md.holder)+extra, m.Len(), "step %d: Len", step)
	}

	// Drain: unlock until every waiter has had its turn.
	for key := range keys {
		for {
			if _, held := md.holder[key]; !held {
				break
			}
			m.Unlock(key)
			id := md.unlock(key)
			synctest.Wait()
			var want []int
			if id >= 0 {
				want = []int{id}
			}
			require.Equal(t, want, acquired.take(), "drain key %d", key)
		}
	}
	require.Equal(t, 0, m.Len())
}
