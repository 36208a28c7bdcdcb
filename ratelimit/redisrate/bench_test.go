package redisrate_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/redisfn"
	"github.com/pacerkit/pacer/ratelimit/redisrate"
)

// inFlight is the number of calls in flight in the parallel benchmarks.
const inFlight = 8

// round is how many calls a benchmark makes before it switches between
// its operation and PING, so that both see the same machine.
const round = 64

// huge is a rate and burst under which no call waits or is refused: the
// benchmarks measure the round trip and the function, not the pacing.
const huge = 1e6

// benchClient returns a client of a redis-server of the benchmark's own,
// so that what it times is its own work only.
func benchClient(b *testing.B) *redis.Client {
	return dial(b, &redis.Options{Addr: privateServer(b), PoolSize: 4 * inFlight})
}

// BenchmarkPing is the floor of the others: one round trip to the server.
// Its x-ping, PING against PING, shows how much two sides of one
// benchmark drift apart on this machine.
func BenchmarkPing(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	ping := func(int64) error { return c.Ping(ctx).Err() }
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, ping) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, ping) })
}

// BenchmarkAllow runs Limiter.Allow (one FCALL of take.lua) and reports
// its time as a multiple of a PING's (x-ping).
func BenchmarkAllow(b *testing.B) {
	c := benchClient(b)
	l, err := redisrate.New(c, redisrate.Config{Rate: huge, Burst: huge, Name: "bench"})
	require.NoError(b, err)
	ctx := context.Background()
	allow := func(int64) error {
		ok, err := l.Allow(ctx)
		if err == nil && !ok {
			b.Fatal("Allow refused at a huge rate")
		}
		return err
	}
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, allow) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, allow) })
}

// BenchmarkWait runs Limiter.Wait, which never sleeps at a huge rate, and
// reports its time as a multiple of a PING's (x-ping).
func BenchmarkWait(b *testing.B) {
	c := benchClient(b)
	l, err := redisrate.New(c, redisrate.Config{Rate: huge, Burst: huge, Name: "bench"})
	require.NoError(b, err)
	ctx := context.Background()
	wait := func(int64) error { return l.Wait(ctx) }
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, wait) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, wait) })
}

// BenchmarkFunctionFloor runs functions that do less than take.lua, on
// the same two keys, to show what any function costs on this server:
// empty is FCALL of "return 0"; calls makes take.lua's three calls (TIME,
// MGET, SET with PXAT) with constant arguments and computes nothing.
// Allow's x-ping less calls' is what take.lua's arithmetic costs.
// evalsha-empty is EVALSHA of "return 0", what the package ran before.
func BenchmarkFunctionFloor(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	lib := redisfn.New("pacerbench_", "",
		redisfn.Function{Name: "empty", Body: "return 0"},
		redisfn.Function{Name: "calls", Body: "redis.call('TIME') redis.call('MGET', KEYS[1], KEYS[2]) " +
			"redis.call('SET', KEYS[1], '1700000000000000', 'PXAT', '1700000000000') return 0"})
	require.NoError(b, lib.Load(ctx, c))
	keys := []any{2, "{bench}:tat", "{bench}:pause", 1, 1, 0}
	for _, name := range []string{"empty", "calls"} {
		cmd := append([]any{"fcall", lib.Function(name)}, keys...)
		run := func(int64) error { return lib.Do(ctx, c, cmd...).Err() }
		b.Run(name+"/serial", func(b *testing.B) { versusPing(b, c, 1, run) })
		b.Run(name+"/parallel8", func(b *testing.B) { versusPing(b, c, inFlight, run) })
	}
	script := redis.NewScript("return 0")
	require.NoError(b, script.Load(ctx, c).Err())
	run := func(int64) error {
		return script.EvalSha(ctx, c, []string{"{bench}:tat", "{bench}:pause"}, 1, 1, 0).Err()
	}
	b.Run("evalsha-empty/serial", func(b *testing.B) { versusPing(b, c, 1, run) })
	b.Run("evalsha-empty/parallel8", func(b *testing.B) { versusPing(b, c, inFlight, run) })
}

// BenchmarkKeyedAllow runs Keyed.Allow over 1,000 keys, which builds the
// key's names and command on every call, and reports its time as a
// multiple of a PING's (x-ping).
func BenchmarkKeyedAllow(b *testing.B) {
	c := benchClient(b)
	k, err := redisrate.NewKeyed(c, redisrate.KeyedConfig{Rate: huge, Burst: huge, Name: "bench"})
	require.NoError(b, err)
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "account-" + strconv.Itoa(i)
	}
	allow := func(i int64) error {
		_, err := k.Allow(ctx, keys[i%int64(len(keys))])
		return err
	}
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, allow) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, allow) })
}

// versusPing runs op b.N times, by width goroutines at once, in rounds of
// 64 calls that alternate with rounds of PING of the same shape, the order
// of each pair swapped every time. It reports the time of a PING
// (ping-ns/op) and op's time as a multiple of it (x-ping): the median over
// pairs of rounds of op's round time over PING's, which a burst of load
// on a shared machine moves far less than a ratio of totals. Only op's
// rounds are timed, and counted in allocs/op.
func versusPing(b *testing.B, c *redis.Client, width int, op func(i int64) error) {
	ctx := context.Background()
	ping := func(int64) error { return c.Ping(ctx).Err() }
	var pings time.Duration
	var ratios []float64
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		var p, o time.Duration
		if len(ratios)%2 == 0 {
			b.StopTimer()
			p = timeRound(b, width, n, &seq, ping)
			b.StartTimer()
			o = timeRound(b, width, n, &seq, op)
		} else {
			o = timeRound(b, width, n, &seq, op)
			b.StopTimer()
			p = timeRound(b, width, n, &seq, ping)
			b.StartTimer()
		}
		pings += p
		ratios = append(ratios, float64(o)/float64(p))
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(pings.Nanoseconds())/float64(b.N), "ping-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "x-ping")
}

// timeRound runs op n times over width goroutines (inline when width is
// 1) and returns how long that took.
func timeRound(b *testing.B, width, n int, seq *atomic.Int64, op func(i int64) error) time.Duration {
	start := time.Now()
	if width == 1 {
		for range n {
			if err := op(seq.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range width {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := op(seq.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
