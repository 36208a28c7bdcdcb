//go:build unix

package redismutex_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redismutex"
)

// TestMeasureTimerBeforeRoundTrip times round trips to a redis-server of its
// own, one at a time, in turn: a PING; a PING just after arming a timer of
// the runtime as far away as a renewal (time.AfterFunc at DefaultTTL/3), as
// TryLock would with a timer per lock, before Unlock's round trip; and a PING
// just after stopping it, as Unlock would. Then, on a Locker, TryLock and
// Unlock in turn with a PING. It prints the medians. Arming a timer that
// becomes the runtime's earliest wakes a thread blocked in the network
// poller, and the next round trip pays for it (see BENCHMARKS.md), which is
// why a Locker times the renewals of all its locks with one timer. A
// measurement: run it with PACER_BENCH=1.
func TestMeasureTimerBeforeRoundTrip(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	c := startOwnServer(t)
	ctx := context.Background()
	ping := func() error { return c.Ping(ctx).Err() }
	var timer *time.Timer
	measure(t, []step{
		{"PING", ping},
		{"arm a timer, PING", func() error {
			timer = time.AfterFunc(redismutex.DefaultTTL/3, func() {})
			return ping()
		}},
		{"stop it, PING", func() error {
			timer.Stop()
			return ping()
		}},
	})

	m := newLockerOn(t, c, redismutex.Config{Name: "t"})
	var l *redismutex.Lock
	measure(t, []step{
		{"PING", ping},
		{"TryLock", func() (err error) {
			l, err = m.TryLock(ctx, "k")
			return err
		}},
		{"Unlock", func() error { return l.Unlock(ctx) }},
	})
}

type step struct {
	name string
	op   func() error
}

// measure runs the steps in turn 5,000 times and logs their medians.
func measure(t *testing.T, steps []step) {
	took := make([][]time.Duration, len(steps))
	for range 5000 {
		for i, s := range steps {
			began := time.Now()
			require.NoError(t, s.op())
			took[i] = append(took[i], time.Since(began))
		}
	}
	for i, s := range steps {
		slices.Sort(took[i])
		t.Logf("%-18s median %v", s.name, took[i][len(took[i])/2])
	}
}
