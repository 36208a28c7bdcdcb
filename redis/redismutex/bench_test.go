package redismutex_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redismutex"
)

// BenchmarkPing is the floor of BenchmarkLockUnlock: one round trip to the
// server, serially and from 8 goroutines.
func BenchmarkPing(b *testing.B) {
	c := client(b)
	redistest.PingVersusPing(b, c)
}

// BenchmarkLockUnlock takes and releases a free lock (TryLock, then
// Unlock: two round trips), serially and from 8 goroutines, each call on
// a key of its own, and reports its cost as a multiple of a PING's
// (x-ping).
func BenchmarkLockUnlock(b *testing.B) {
	c := client(b)
	m := newLockerOn(b, c, redismutex.Config{Prefix: prefix(b), Name: "bench"})
	ctx := context.Background()
	lockUnlock := func(i int64) error {
		l, err := m.TryLock(ctx, strconv.FormatInt(i, 10))
		if err != nil {
			return err
		}
		return l.Unlock(ctx)
	}
	redistest.VersusPing(b, c, lockUnlock)
}

// BenchmarkTwoFunctions calls two functions that do nothing (return 1),
// one after the other, as TryLock and Unlock call two that do something:
// the floor of any lock of two functions. twoScripts runs two EVALSHA of
// scripts that do nothing, what the package ran before; commands runs two
// functions that make the commands a lock cannot do without and nothing
// else: SET NX PX and INCR of the fence to take it, GET and DEL to release
// it by compare-and-delete.
func BenchmarkTwoFunctions(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	lib := redisfn.New("pacerbench_", "",
		redisfn.Function{Name: "nothing", Body: "return 1"},
		redisfn.Function{Name: "take", Body: "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'GET') return redis.call('INCR', KEYS[2])"},
		redisfn.Function{Name: "release", Body: "redis.call('GET', KEYS[1]) return redis.call('DEL', KEYS[1])"})
	require.NoError(b, lib.Load(ctx, c))
	b.Cleanup(func() { _ = c.FunctionDelete(context.Background(), lib.Name()).Err() })
	cmd := []any{"fcall", lib.Function("nothing"), 1, "{pacertest}:nothing"}
	two := func(int64) error {
		if err := lib.Do(ctx, c, cmd...).Err(); err != nil {
			return err
		}
		return lib.Do(ctx, c, cmd...).Err()
	}
	redistest.VersusPing(b, c, two)
	twoScripts := func(int64) error {
		if err := nothing.Run(ctx, c, []string{"{pacertest}:nothing"}).Err(); err != nil {
			return err
		}
		return nothing.Run(ctx, c, []string{"{pacertest}:nothing"}).Err()
	}
	b.Run("twoScripts", func(b *testing.B) { redistest.VersusPing(b, c, twoScripts) })
	take := []any{"fcall", lib.Function("take"), 2, "{pacertest}:k", "{pacertest}:fence", "token", 10000}
	release := []any{"fcall", lib.Function("release"), 1, "{pacertest}:k"}
	commands := func(int64) error {
		if err := lib.Do(ctx, c, take...).Err(); err != nil {
			return err
		}
		return lib.Do(ctx, c, release...).Err()
	}
	b.Run("commands", func(b *testing.B) { redistest.VersusPing(b, c, commands) })
}

var nothing = redis.NewScript("return 1")
