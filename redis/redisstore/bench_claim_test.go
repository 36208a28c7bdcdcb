package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// Claim latency does not grow with the backlog: a Claim of one key from a
// queue of 10^6 values over 10^5 keys against one from a queue of 100
// values over 100 keys, in alternating rounds of 64 Claims, each lease
// acked and its value added back (untimed) so that both queues keep their
// size. The target is a ratio of at most 1.5.
func TestMeasureClaimLatency(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "claim"})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	val := []byte(`{"user":42,"task":"recompute"}`)

	// The backlog: 10 values per Add, 32 Adds in flight.
	t0 := time.Now()
	const bigKeys, perKey = 100000, 10
	batch := make([][]byte, perKey)
	for i := range batch {
		batch[i] = val
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < bigKeys; k = next.Add(1) - 1 {
				assertNoError(t, s.Add(ctx, "big", strconv.FormatInt(k, 10), batch, store.AddParams{}))
			}
		})
	}
	wg.Wait()
	for k := range 100 {
		require.NoError(t, s.Add(ctx, "small", strconv.Itoa(k), [][]byte{val}, store.AddParams{}))
	}
	st, err := s.Stats(ctx, "big")
	require.NoError(t, err)
	require.Equal(t, bigKeys*perKey, st.Values)
	fmt.Printf("backlog of %d values over %d keys built in %v\n", st.Values, st.Keys, time.Since(t0).Round(time.Millisecond))

	claim := func(q string) time.Duration {
		t0 := time.Now()
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute})
		took := time.Since(t0)
		require.NoError(t, err)
		require.Len(t, ls, 1)
		_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
		require.NoError(t, s.Add(ctx, q, ls[0].Key, ls[0].Values, store.AddParams{}))
		return took
	}
	for range 5 {
		var big, small time.Duration
		for range 30 {
			for range 64 {
				small += claim("small")
			}
			for range 64 {
				big += claim("big")
			}
		}
		fmt.Printf("claim latency: 10^6 values %v, 100 values %v per Claim: ratio %.2f (PING p50 %v)\n",
			big/(30*64), small/(30*64), float64(big)/float64(small), pingTime(t, c, 200))
	}
}
