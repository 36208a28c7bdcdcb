package baseline

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

const (
	values, keys, workers = 20000, 500, 8
	adders                = 16 // Adds or Enqueues in flight while a round fills its queue
)

// TestMeasureStrictVersusAsynq runs, in alternating rounds against one
// redis-server of its own, PING from 8 goroutines on one client (8 in
// flight), pacer's strict path (20,000 values over 500 keys, a Runner of
// 8 workers, MaxBatch 1, a no-op handler; redisstore's
// TestMeasureStrictPath) and asynq working 20,000 tasks with 8 workers
// (Concurrency 8) and a no-op handler, and prints each one's values or
// tasks a second and their ratios. asynq keeps no order per key: what is
// compared is the plain throughput of 8 workers. Each is timed from the
// start of its workers (Run, Start) until the handler saw the last one,
// after its queue was filled (Adds and Enqueues, 16 in flight).
// PACER_BENCH=1 runs it, PACER_BENCH_ROUNDS sets the rounds (3).
func TestMeasureStrictVersusAsynq(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	addr := redistest.StartServer(t).Addr()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "versus"})
	require.NoError(t, err)
	defer s.Close()
	for round := range rounds {
		ping := pings(t, c)
		q := fmt.Sprintf("q%d", round)
		fillPacer(t, s, q)
		ours := values / storetest.RunStrict[int](t, s, q, storetest.StrictRun{Workers: workers, Values: values}).Seconds()
		theirs := values / runAsynq(t, addr).Seconds()
		fmt.Printf("round %d: PING 8 in flight %.0f/s; pacer strict %.0f values/s (%.3f x PING); asynq %.0f tasks/s (%.3f x PING); pacer/asynq %.2f\n",
			round, ping, ours, ours/ping, theirs, theirs/ping, ours/theirs)
	}
}

// pings returns how many PINGs a second c makes from 8 goroutines at
// once, 20,000 in all.
func pings(t *testing.T, c *redis.Client) float64 {
	var wg sync.WaitGroup
	t0 := time.Now()
	for range workers {
		wg.Go(func() {
			for range values / workers {
				if err := c.Ping(context.Background()).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return values / time.Since(t0).Seconds()
}

// inParallel calls f for 0 to n-1 from adders goroutines.
func inParallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range adders {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// fillPacer adds the values, the i-th to key i%keys of queue q.
func fillPacer(t *testing.T, s *redisstore.Store, q string) {
	inParallel(values, func(i int) {
		if err := s.Add(context.Background(), q, strconv.Itoa(i%keys), [][]byte{[]byte(strconv.Itoa(i))}, store.AddParams{}); err != nil {
			t.Error(err)
		}
	})
}

// runAsynq enqueues the tasks, the i-th with "key" i%keys as its payload,
// then works them with a server of 8 workers until the handler saw them
// all, and returns the time from the server's start until then.
func runAsynq(t *testing.T, addr string) time.Duration {
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: addr, PoolSize: 64})
	defer client.Close()
	inParallel(values, func(i int) {
		if _, err := client.Enqueue(asynq.NewTask("noop", []byte(strconv.Itoa(i%keys)))); err != nil {
			t.Error(err)
		}
	})
	var handled atomic.Int64
	all := make(chan struct{})
	srv := asynq.NewServer(asynq.RedisClientOpt{Addr: addr, PoolSize: 64}, asynq.Config{Concurrency: workers, LogLevel: asynq.ErrorLevel})
	t0 := time.Now()
	require.NoError(t, srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		if handled.Add(1) == values {
			close(all)
		}
		return nil
	})))
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		t.Fatalf("asynq handled %d tasks of %d in 5 minutes", handled.Load(), values)
	}
	took := time.Since(t0)
	srv.Shutdown()
	require.Equal(t, int64(values), handled.Load(), "every task handled once")
	return took
}
