package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// A page of Keys on a queue of 10^6 keys costs bounded work: pages of 100
// keys, without a filter, with a prefix, and with a state filter that no
// key passes (the most a page reads: 1,000 keys of the index), each
// timed round trip and all, and by the server's own time for the call
// (INFO commandstats). One key in ten is debouncing, the others ready. The
// target is at most 50 ms a page. It also times the Queues call over the
// queue, and the first page after the index was lost, which rebuilds it.
func TestMeasureKeysPage(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "keys"})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	const n, q = 1000000, "big"

	t0 := time.Now()
	val := []byte(`{"user":42,"task":"recompute"}`)
	pipe := c.Pipeline()
	for i := range n {
		var wait int64
		if i%10 == 0 {
			wait = int64(time.Hour / time.Microsecond)
		}
		pipe.Do(ctx, redisstore.AddCommand("keys", q, fmt.Sprintf("user:%07d", i), val, wait)...)
		if pipe.Len() == 10000 || i == n-1 {
			_, err := pipe.Exec(ctx)
			require.NoError(t, err)
		}
	}
	st, err := s.Stats(ctx, q) // folds the Adds
	require.NoError(t, err)
	require.Equal(t, n, st.Keys)
	fmt.Printf("%d keys added and folded in %v; server memory %d MB\n", st.Keys, time.Since(t0).Round(time.Millisecond), usedMemory(t, c)>>20)

	page := func(kq store.KeyQuery) (store.KeyPage, time.Duration) {
		t0 := time.Now()
		p, err := s.Keys(ctx, q, kq)
		took := time.Since(t0)
		require.NoError(t, err)
		return p, took
	}
	for _, tc := range []struct {
		name string
		kq   store.KeyQuery
		keys int
	}{
		{"100 keys from the start", store.KeyQuery{Limit: 100}, 100},
		{"100 keys from the middle", store.KeyQuery{Limit: 100, Prefix: "user:05"}, 100},
		{"100 keys, prefix of 10", store.KeyQuery{Limit: 100, Prefix: "user:012345"}, 10},
		{"1,000 keys", store.KeyQuery{Limit: 1000}, 1000},
		{"held (none): 1,000 read", store.KeyQuery{Limit: 100, State: store.Held}, 0},
		{"debouncing: 1,000 read", store.KeyQuery{Limit: 100, State: store.Debouncing}, 100},
	} {
		calls0, usec0 := fcallStats(t, c)
		var ds []time.Duration
		kq := tc.kq
		for range 200 {
			p, took := page(kq)
			require.Len(t, p.Keys, tc.keys, tc.name)
			ds = append(ds, took)
			if p.Next == "" {
				kq = tc.kq
				continue
			}
			kq.Cursor = p.Next // the next page, as an operator pages on
		}
		calls, usec := fcallStats(t, c)
		p50, p99, top := storetest.Quantiles(ds)
		fmt.Printf("Keys, %-26s p50 %v p99 %v max %v; server %.2f ms a call\n", tc.name+":", p50, p99, top, (usec-usec0)/float64(calls-calls0)/1000)
	}

	for range 3 {
		t0 := time.Now()
		qs, err := s.Queues(ctx)
		require.NoError(t, err)
		require.Len(t, qs, 1)
		fmt.Printf("Queues over the queue of %d keys: %v\n", qs[0].Stats.Keys, time.Since(t0).Round(time.Microsecond))
	}

	// As after an upgrade from a version without the index.
	before := usedMemory(t, c)
	require.NoError(t, c.Del(ctx, redisname.KeyPrefix("keys", q)+"keys").Err())
	fmt.Printf("the index holds %d bytes a key\n", (before-usedMemory(t, c))/n)
	calls0, usec0 := fcallStats(t, c)
	p, took := page(store.KeyQuery{Limit: 100})
	require.Len(t, p.Keys, 100)
	calls, usec := fcallStats(t, c)
	fmt.Printf("the first page without the index: %v, in %d calls of %.2f ms of the server's each\n", took.Round(time.Millisecond), calls-calls0, (usec-usec0)/float64(calls-calls0)/1000)
}

// fcallStats returns the calls of FCALL so far and the server's time in
// them, in microseconds.
func fcallStats(t *testing.T, c *redis.Client) (int, float64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_fcall:"); ok {
			var calls int
			var usec float64
			_, err := fmt.Sscanf(rest, "calls=%d,usec=%f,", &calls, &usec)
			require.NoError(t, err, rest)
			return calls, usec
		}
	}
	return 0, 0
}

// usedMemory returns the server's used_memory, in bytes.
func usedMemory(t *testing.T, c *redis.Client) int {
	info, err := c.Info(context.Background(), "memory").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}
