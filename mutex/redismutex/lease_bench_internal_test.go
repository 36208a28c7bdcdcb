package redismutex

import (
	"testing"
	"time"
)

// BenchmarkLease is what a lock's renewals cost on the hot path: starting
// a lease (one timer, armed for TTL/3) and stopping it, as TryLock and
// Unlock do; serially and from 8 goroutines.
func BenchmarkLease(b *testing.B) {
	var ts tasks
	owner := nopOwner{}
	run := func() {
		var l lease
		l.start(owner, &ts, DefaultTTL, time.Now())
		l.stop()
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run()
		}
	})
	b.Run("parallel8", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				run()
			}
		})
	})
}

type nopOwner struct{}

func (nopOwner) renew(time.Time) (bool, error) { return true, nil }
func (nopOwner) lose()                         {}
