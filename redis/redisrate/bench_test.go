package redisrate_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// huge is a rate and burst under which no call waits or is refused: the
// benchmarks measure the round trip and the function, not the pacing.
const huge = 1e6

// benchClient returns a client of a redis-server of the benchmark's own,
// so that what it times is its own work only.
func benchClient(b *testing.B) *redis.Client {
	return dial(b, &redis.Options{Addr: redistest.StartServer(b).Addr(), PoolSize: 4 * redistest.InFlight})
}

// BenchmarkPing is the floor of the others: one round trip to the server.
// Its x-ping, PING against PING, shows how much two sides of one
// benchmark drift apart on this machine.
func BenchmarkPing(b *testing.B) {
	c := benchClient(b)
	redistest.PingVersusPing(b, c)
}

// BenchmarkAllow runs Bucket.Allow (one FCALL of take.lua) and reports
// its time as a multiple of a PING's (x-ping).
func BenchmarkAllow(b *testing.B) {
	c := benchClient(b)
	l, err := redisrate.NewBucket(b.Context(), c, redisrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench"})
	require.NoError(b, err)
	ctx := context.Background()
	allow := func(int64) error {
		ok, err := l.Allow(ctx)
		if err == nil && !ok {
			b.Fatal("Allow refused at a huge rate")
		}
		return err
	}
	redistest.VersusPing(b, c, allow)
}

// BenchmarkWait runs Bucket.Wait, which never sleeps at a huge rate, and
// reports its time as a multiple of a PING's (x-ping).
func BenchmarkWait(b *testing.B) {
	c := benchClient(b)
	l, err := redisrate.NewBucket(b.Context(), c, redisrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench"})
	require.NoError(b, err)
	ctx := context.Background()
	wait := func(int64) error { return l.Wait(ctx) }
	redistest.VersusPing(b, c, wait)
}

// BenchmarkFunctionFloor runs functions that do less than take.lua, on
// the same two keys, to show what any function costs on this server:
// empty is FCALL of "return 0"; calls makes take.lua's three calls (TIME,
// MGET, and SET with KEEPTTL, as most writes of a busy bucket are) with
// constant arguments and computes nothing.
// Allow's x-ping less calls' is what take.lua's arithmetic costs.
// evalsha-empty is EVALSHA of "return 0", what the package ran before.
func BenchmarkFunctionFloor(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	lib := redisfn.New("pacerbench_", "",
		redisfn.Function{Name: "empty", Body: "return 0"},
		redisfn.Function{Name: "calls", Body: "redis.call('TIME') redis.call('MGET', KEYS[1], KEYS[2]) " +
			"redis.call('SET', KEYS[1], '1700000000000000', 'KEEPTTL') return 0"})
	require.NoError(b, lib.Load(ctx, c))
	keys := []any{2, "{bench}:tat", "{bench}:pause", 1, 1, 0}
	for _, name := range []string{"empty", "calls"} {
		cmd := append([]any{"fcall", lib.Function(name)}, keys...)
		run := func(int64) error { return lib.Do(ctx, c, cmd...).Err() }
		b.Run(name, func(b *testing.B) { redistest.VersusPing(b, c, run) })
	}
	script := redis.NewScript("return 0")
	require.NoError(b, script.Load(ctx, c).Err())
	run := func(int64) error {
		return script.EvalSha(ctx, c, []string{"{bench}:tat", "{bench}:pause"}, 1, 1, 0).Err()
	}
	b.Run("evalsha-empty", func(b *testing.B) { redistest.VersusPing(b, c, run) })
}

// BenchmarkKeyedAllow runs Keyed.Allow over 1,000 keys, which builds the
// key's names and command on every call, and reports its time as a
// multiple of a PING's (x-ping).
func BenchmarkKeyedAllow(b *testing.B) {
	c := benchClient(b)
	k, err := redisrate.NewKeyed(b.Context(), c, redisrate.KeyedConfig{Rate: huge, Burst: huge, Name: "bench"})
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
	redistest.VersusPing(b, c, allow)
}
