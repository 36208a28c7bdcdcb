package mutex_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pacerkit/pacer/mutex"
)

// locker is what the benchmarks exercise.
type locker interface {
	Lock(key string)
	Unlock(key string)
}

// BenchmarkKeyedLock measures an uncontended Lock followed by Unlock: of
// one key from one goroutine, and of 10000 keys from GOMAXPROCS goroutines,
// each walking the keys from its own random start.
func BenchmarkKeyedLock(b *testing.B) {
	benchLocker(b, func() locker { return new(mutex.Keyed[string]) })
}

// BenchmarkRefcountLocker runs the same workload on the common design of
// one mutex guarding a map of reference-counted per-key mutexes, allocated
// on each first Lock of a key, for comparison.
func BenchmarkRefcountLocker(b *testing.B) {
	benchLocker(b, func() locker { return &refcountLocker{locks: map[string]*refcounted{}} })
}

func benchLocker(b *testing.B, newLocker func() locker) {
	b.Run("keys=1", func(b *testing.B) {
		l := newLocker()
		b.ReportAllocs()
		for b.Loop() {
			l.Lock("account-1")
			l.Unlock("account-1")
		}
	})
	b.Run("keys=10000/parallel", func(b *testing.B) {
		l := newLocker()
		keys := make([]string, 10000)
		for i := range keys {
			keys[i] = "account-" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(keys))
			for pb.Next() {
				k := keys[i]
				l.Lock(k)
				l.Unlock(k)
				if i += 7919; i >= len(keys) { // a prime stride
					i -= len(keys)
				}
			}
		})
	})
}

type refcounted struct {
	mu   sync.Mutex
	refs atomic.Int32
}

type refcountLocker struct {
	mu    sync.Mutex
	locks map[string]*refcounted
}

func (l *refcountLocker) Lock(key string) {
	l.mu.Lock()
	c, ok := l.locks[key]
	if !ok {
		c = new(refcounted)
		l.locks[key] = c
	}
	c.refs.Add(1)
	l.mu.Unlock()
	c.mu.Lock()
}

func (l *refcountLocker) Unlock(key string) {
	l.mu.Lock()
	c := l.locks[key]
	c.mu.Unlock()
	if c.refs.Add(-1) == 0 {
		delete(l.locks, key)
	}
	l.mu.Unlock()
}

// BenchmarkKeyedLockContended measures Lock followed by Unlock of one key
// from 4×GOMAXPROCS goroutines: every Unlock hands the key to the next
// waiter in line, which costs a goroutine wake-up and one allocation for
// the waiter's place in the queue.
func BenchmarkKeyedLockContended(b *testing.B) {
	var m mutex.Keyed[string]
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Lock("account-1")
			m.Unlock("account-1")
		}
	})
}
