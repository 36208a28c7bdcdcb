package baseline

import (
	"context"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// huge is a rate and burst under which no call is refused: the
// benchmarks measure the round trip and the script, not the pacing.
const huge = 1_000_000

// BenchmarkGCRA runs one Allow of go-redis/redis_rate (a GCRA script run
// with EVALSHA) and one of pacer's redisrate, each against PING on a
// redis-server of the benchmark's own, serially and with 8 calls in
// flight, and reports each as a multiple of a PING (x-ping).
func BenchmarkGCRA(b *testing.B) {
	c := redistest.Dial(b, &redis.Options{Addr: redistest.StartServer(b).Addr(), PoolSize: 4 * redistest.InFlight})
	ctx := context.Background()
	theirs := redis_rate.NewLimiter(c)
	limit := redis_rate.Limit{Rate: huge, Burst: huge, Period: time.Second}
	b.Run("redis_rate", func(b *testing.B) {
		redistest.VersusPing(b, c, func(int64) error {
			res, err := theirs.Allow(ctx, "bench", limit)
			if err == nil && res.Allowed == 0 {
				b.Fatal("redis_rate refused at a huge rate")
			}
			return err
		})
	})
	ours, err := redisrate.NewBucket(b.Context(), c, redisrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("redisrate", func(b *testing.B) {
		redistest.VersusPing(b, c, func(int64) error {
			ok, err := ours.Allow(ctx)
			if err == nil && !ok {
				b.Fatal("redisrate refused at a huge rate")
			}
			return err
		})
	})
}
