package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// The lag from ready to handler start while the workers are idle
// (storetest.ReadyLag): 1,000 values added with no debounce to an idle
// Runner of 2 workers, 3 ms apart. The target is a p99 under 1.5 ms.
func TestMeasureReadyLag(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "lag"})
	require.NoError(t, err)
	defer s.Close()
	const n = 1000
	p50, p99, top := storetest.ReadyLag(t, s, "q", n)
	ping := pingTime(t, c, 1000)
	fmt.Printf("ready-to-start lag, %d values: p50 %v, p99 %v, max %v (PING p50 %v)\n", n, p50, p99, top, ping)
}

// Debounce precision across instances: two Runners on one Redis, each key
// getting three values 10 ms apart from alternate instances, then going
// quiet for Wait (50 ms). Its batch must hold all three values, and start
// within Wait + 5 ms of the last Add: handler start - last Add's return -
// Wait, over 300 keys, 10 at a time. Beside it, the floor the machine sets
// in the same run: how late a bare timer of this process fires (timers of
// 5 to 25 ms, one after the other, while the keys are added).
func TestMeasureDebouncePrecision(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s1, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "precision"})
	require.NoError(t, err)
	defer s1.Close()
	s2, err := redisstore.New(t.Context(), benchClient(t, addr), redisstore.Config{Prefix: "precision"})
	require.NoError(t, err)
	defer s2.Close()
	const wait = 50 * time.Millisecond
	var mu sync.Mutex
	startedAt := map[string]time.Time{}
	batches := map[string][]int{}
	h := func(_ context.Context, key string, batch []int) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, ok := startedAt[key]; !ok {
			startedAt[key] = now
		}
		batches[key] = append(batches[key], batch...)
		return nil
	}
	cfg := pacer.Config[string, int]{Store: s1, Name: "q", Workers: 4, Debounce: wait, MaxWait: time.Second}
	r1, err := pacer.New(cfg, h)
	require.NoError(t, err)
	cfg.Store = s2
	r2, err := pacer.New(cfg, h)
	require.NoError(t, err)
	storetest.StartRunner(t, r1)
	storetest.StartRunner(t, r2)
	rs := []*pacer.Runner[string, int]{r1, r2}

	floor := make(chan []time.Duration)
	stopFloor := make(chan struct{})
	go func() { floor <- timerLateness(stopFloor) }()

	const keys, together = 300, 10
	last := make([]time.Time, keys)
	for g := 0; g < keys; g += together {
		var wg sync.WaitGroup
		for k := g; k < g+together; k++ {
			wg.Go(func() {
				time.Sleep(time.Duration(k-g) * time.Millisecond) // spread the group
				for i := range 3 {
					if i > 0 {
						time.Sleep(10 * time.Millisecond)
					}
					require.NoError(t, rs[(k+i)%2].Add(context.Background(), fmt.Sprint(k), k*3+i))
				}
				last[k] = time.Now()
			})
		}
		wg.Wait()
		time.Sleep(wait + 30*time.Millisecond)
	}
	close(stopFloor)
	fp50, fp99, ftop := storetest.Quantiles(<-floor)
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	late := make([]time.Duration, keys)
	for k := range keys {
		key := fmt.Sprint(k)
		require.Equal(t, []int{k * 3, k*3 + 1, k*3 + 2}, batches[key], "key %s keeps every value, in one batch", key)
		late[k] = startedAt[key].Sub(last[k]) - wait
	}
	p50, p99, top := storetest.Quantiles(late)
	fmt.Printf("debounce precision, %d keys, Wait %v, 2 instances: start - last Add - Wait: p50 %v, p99 %v, max %v; a bare timer's lateness: p50 %v, p99 %v, max %v\n",
		keys, wait, p50, p99, top, fp50, fp99, ftop)
}

// timerLateness times timers of 5 to 25 ms, one after the other, until
// stop is closed, and returns how late each fired.
func timerLateness(stop <-chan struct{}) []time.Duration {
	var late []time.Duration
	for i := 0; ; i++ {
		d := time.Duration(5+i%21) * time.Millisecond
		t0 := time.Now()
		t := time.NewTimer(d)
		select {
		case <-stop:
			t.Stop()
			return late
		case <-t.C:
			late = append(late, time.Since(t0)-d)
		}
	}
}
