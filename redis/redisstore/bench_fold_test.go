package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestMeasureFold measures the fold alone: the server's CPU time, per
// value, of the one Claim that folds the 20,000 values of the strict
// path's workloads (500 keys, distinct keys) from the inbox into their
// keys, its FOLDING rounds included. The queues stay: the server is the
// test's own. PACER_BENCH_ROUNDS sets the rounds
// (3).
func TestMeasureFold(t *testing.T) {
	benchOnly(t)
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "fold"})
	require.NoError(t, err)
	defer s.Close()
	queue := 0
	for round := range rounds {
		for _, sc := range storetest.StrictCases {
			if sc.Background {
				continue // the same fold as without
			}
			q := fmt.Sprintf("q%d", queue)
			queue++
			fill(t, s, q, storetest.StrictValues, sc.Keys, func(i int) []byte { return []byte(strconv.Itoa(i)) })
			cpu0 := redistest.ServerCPU(t, c)
			ls, _, err := s.Claim(context.Background(), q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute})
			cpu := redistest.ServerCPU(t, c) - cpu0
			require.NoError(t, err)
			require.Len(t, ls, 1)
			inbox, err := c.Keys(t.Context(), "*"+q+"*inbox").Result()
			require.NoError(t, err)
			require.Empty(t, inbox, "the Claim folded every Add")
			fmt.Printf("fold, %s, round %d: server CPU %.2f µs/value\n", sc.Name, round, micros(cpu))
		}
	}
}
