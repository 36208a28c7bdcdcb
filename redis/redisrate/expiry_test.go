package redisrate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// Every function keeps each key expiring at the first whole second of the
// server's clock past its value (bucket.lua's write), whether it moved the
// expiry or kept it: random takes, flights of takes, releases and pauses
// on a bucket of 20 events per second, whose tat crosses a second every
// 20 events, each followed by a check of both keys.
func TestKeysExpireAtTheirValuesSecond(t *testing.T) {
	c := redistest.Client(t)
	s, err := newShape("BucketConfig", 20, 4, "expiry", "pacertest-"+t.Name(), false)
	require.NoError(t, err)
	r := newRemote(c, s, s.tag+"tat", s.tag+"pause", true)
	ctx := context.Background()
	t.Cleanup(func() { _ = c.Del(ctx, r.tat, r.pause).Err() })
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	var tats []int64 // the tats takes returned, which release may give back
	took := func(delay, tat int64) {
		if delay > 0 {
			tats = append(tats, tat)
		}
	}
	for i := range 400 {
		switch op := rng.IntN(10); {
		case op < 5:
			mosts := []int64{0, -1, rng.Int64N(2_000_000)}
			delay, tat, err := r.take(ctx, mosts[rng.IntN(len(mosts))])
			require.NoError(t, err)
			took(delay, tat)
		case op < 7:
			most := make([]int64, 1+rng.IntN(5))
			for j := range most {
				most[j] = rng.Int64N(3_000_000) - 1
			}
			turns, err := r.takes(ctx, most)
			require.NoError(t, err)
			for _, tn := range turns {
				took(tn.delay, tn.tat)
			}
		case op < 9 && len(tats) > 0:
			// The last turn taken is the one most likely given back.
			j := len(tats) - 1 - min(rng.IntN(3), len(tats)-1)
			require.NoError(t, r.release(ctx, tats[j]))
		default:
			require.NoError(t, r.pauseFor(ctx, 10_000+rng.Int64N(1_500_000)))
		}
		for _, key := range []string{r.tat, r.pause} {
			v, err := c.Get(ctx, key).Int64()
			if err != nil {
				require.ErrorIs(t, err, redis.Nil, "op %d", i)
				continue
			}
			at, err := c.Do(ctx, "PEXPIRETIME", key).Int64()
			require.NoError(t, err)
			require.Equal(t, (v-v%1_000_000)/1000+1000, at, "op %d: %s holds %d", i, key, v)
		}
	}
}
