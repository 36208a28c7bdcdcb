package redismutex_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/redisfn"
	"github.com/pacerkit/pacer/mutex/redismutex"
)

// inFlight is the number of goroutines of the parallel benchmarks: more
// than the machine's cores, as calls to Redis spend most of their time
// waiting.
const inFlight = 8

// round is how many calls a benchmark makes before it switches between
// its operation and PING, so that both see the same machine.
const round = 64

// BenchmarkPing is the floor of BenchmarkLockUnlock: one round trip to the
// server, serially and from 8 goroutines.
func BenchmarkPing(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	ping := func(int) error { return c.Ping(ctx).Err() }
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, ping) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, ping) })
}

// BenchmarkLockUnlock takes and releases a free lock (TryLock, then
// Unlock: two round trips), serially and from 8 goroutines, each on a key
// of its own, and reports its cost as a multiple of a PING's (x-ping).
func BenchmarkLockUnlock(b *testing.B) {
	c := client(b)
	m := newLockerOn(b, c, redismutex.Config{Prefix: prefix(b), Name: "bench"})
	ctx := context.Background()
	lockUnlock := func(g int) error {
		l, err := m.TryLock(ctx, strconv.Itoa(g))
		if err != nil {
			return err
		}
		return l.Unlock(ctx)
	}
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, lockUnlock) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, lockUnlock) })
}

// BenchmarkTwoFunctions calls two functions that do nothing (return 1),
// one after the other, as TryLock and Unlock call two that do something:
// the floor of any lock of two functions. twoScripts runs two EVALSHA of
// scripts that do nothing, what the package ran before.
func BenchmarkTwoFunctions(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	lib := redisfn.New("pacerbench_", "", redisfn.Function{Name: "nothing", Body: "return 1"})
	require.NoError(b, lib.Load(ctx, c))
	b.Cleanup(func() { _ = c.FunctionDelete(context.Background(), lib.Name()).Err() })
	cmd := []any{"fcall", lib.Function("nothing"), 1, "{pacertest}:nothing"}
	two := func(int) error {
		if err := lib.Do(ctx, c, cmd...).Err(); err != nil {
			return err
		}
		return lib.Do(ctx, c, cmd...).Err()
	}
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, two) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, two) })
	twoScripts := func(int) error {
		if err := nothing.Run(ctx, c, []string{"{pacertest}:nothing"}).Err(); err != nil {
			return err
		}
		return nothing.Run(ctx, c, []string{"{pacertest}:nothing"}).Err()
	}
	b.Run("twoScripts/serial", func(b *testing.B) { versusPing(b, c, 1, twoScripts) })
	b.Run("twoScripts/parallel8", func(b *testing.B) { versusPing(b, c, inFlight, twoScripts) })
}

var nothing = redis.NewScript("return 1")

// versusPing runs op b.N times, by width goroutines at once, in rounds that
// alternate with rounds of PING of the same shape; it reports the time of
// a PING (ping-ns/op) and op's time as a multiple of it (x-ping). op gets
// the number of its goroutine, 0 to width-1.
func versusPing(b *testing.B, c *redis.Client, width int, op func(g int) error) {
	ctx := context.Background()
	ping := func(int) error { return c.Ping(ctx).Err() }
	var pings, ops time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		b.StopTimer()
		pings += timeRound(b, width, n, ping)
		b.StartTimer()
		ops += timeRound(b, width, n, op)
	}
	b.StopTimer()
	b.ReportMetric(float64(pings.Nanoseconds())/float64(b.N), "ping-ns/op")
	b.ReportMetric(float64(ops)/float64(pings), "x-ping")
}

// timeRound runs op n times over width goroutines and returns how long
// that took.
func timeRound(b *testing.B, width, n int, op func(g int) error) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	start := time.Now()
	var wg sync.WaitGroup
	for g := range width {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := op(g); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
