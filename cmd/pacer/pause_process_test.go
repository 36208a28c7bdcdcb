package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// pauseEnv is set in the environment of the processes of TestPauseProcesses.
const pauseEnv = "PACER_CLI_PAUSE_PROCESS"

// TestPauseProcesses is the operator's pause end to end: 3 OS processes
// run pacer Runners on one queue of one store, and pacer pause, run as a
// process of its own, stops them all: once the leases out before it
// ended, no batch starts on any of them until pacer resume, while values
// are still added and pacer explain says the queue is paused. After the
// resume every value added is handled, none lost.
func TestPauseProcesses(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		ctx := t.Context()
		rec := recorder(t)
		tag := "pacer-cli-test-" + token()
		t.Cleanup(func() { rec.Del(context.Background(), tag+":starts", tag+":handled") })
		const q = "jobs"
		where := e.flags[3] // the prefix or the schema
		var procs []*storetest.Process
		for range 3 {
			procs = append(procs, storetest.StartProcess(t, "TestPauseChild", pauseEnv, e.name, where, q, tag))
		}
		for _, p := range procs {
			p.Go(t)
		}
		added := 0
		add := func(n int) {
			for range n {
				require.NoError(t, e.st.Add(ctx, q, "k"+strconv.Itoa(added%20), [][]byte{[]byte(strconv.Itoa(added))}, store.AddParams{}))
				added++
			}
		}
		handled := func() []string {
			vs, err := rec.LRange(ctx, tag+":handled", 0, -1).Result()
			require.NoError(t, err)
			return vs
		}
		starts := func() int {
			n, err := rec.Get(ctx, tag+":starts").Int()
			if err == redis.Nil {
				return 0
			}
			require.NoError(t, err)
			return n
		}
		stats := func() store.Stats {
			s, err := e.st.Stats(ctx, q)
			require.NoError(t, err)
			return s
		}

		add(100)
		require.Eventually(t, func() bool { return len(handled()) > 0 }, 30*time.Second, 10*time.Millisecond, "the processes handle values")
		require.Equal(t, "paused queue jobs\n", ok(t, e.with("pause", q)...))
		// The leases out before the pause end as usual; then none is taken.
		require.Eventually(t, func() bool { return stats().Leased == 0 }, 30*time.Second, 10*time.Millisecond, "the leases out end")
		before := starts()
		add(50)
		// The processes keep waiting for work for a while: they are not
		// idle for want of it (values are ready), yet start nothing.
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			s := stats()
			require.Zero(t, s.Leased, "a lease was taken on a paused queue")
			require.True(t, s.Paused)
			time.Sleep(50 * time.Millisecond)
		}
		require.Equal(t, before, starts(), "batches started on a paused queue")
		require.Positive(t, stats().Ready, "values wait, ready")
		assert.Contains(t, ok(t, e.with("explain", q, "k7")...), "the queue is paused by an operator")

		require.Equal(t, "resumed queue jobs\n", ok(t, e.with("resume", q)...))
		require.Eventually(t, func() bool { return len(handled()) >= added }, 60*time.Second, 20*time.Millisecond, "every value is handled after the resume")
		require.Greater(t, starts(), before, "batches start again")
		got := 0
		for _, p := range procs {
			n, _ := p.Stop(t)
			got += n
		}
		h := handled()
		require.Len(t, h, got, "what the processes say they handled")
		want := make([]string, added)
		for i := range want {
			want[i] = strconv.Itoa(i)
		}
		slices.Sort(h)
		slices.Sort(want)
		require.Equal(t, want, h, "each value handled once, none lost")
		require.Zero(t, stats().Values)
	})
}

// recorder is the Redis where the processes record what they start and
// handle, on either engine.
func recorder(t *testing.T) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(t, err)
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		enginetest.Missing(t, "no Redis at "+enginetest.RedisURL()+": "+err.Error())
	}
	return c
}

// TestPauseChild is a process of TestPauseProcesses: a Runner with 2
// workers on the queue, whose handler counts each batch it starts and
// records each value it handles; it starts on "go" and stops when its
// standard input closes, printing "handled N". Run on its own, it skips.
func TestPauseChild(t *testing.T) {
	args := storetest.ProcessArgs(t, pauseEnv)
	engineName, where, q, tag := args[0], args[1], args[2], args[3]
	ctx := context.Background()
	var st store.Store
	switch engineName {
	case "redis":
		opt, err := redis.ParseURL(enginetest.RedisURL())
		require.NoError(t, err)
		c := redis.NewClient(opt)
		defer c.Close()
		s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: where})
		require.NoError(t, err)
		defer s.Close()
		st = s
	default:
		pool, err := pgxpool.New(ctx, enginetest.PostgresURL())
		require.NoError(t, err)
		defer pool.Close()
		s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: where})
		require.NoError(t, err)
		defer s.Close()
		st = s
	}
	rec := recorder(t)
	var handled atomic.Int64 // the handlers of two keys run at once
	r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: q, Workers: 2},
		func(ctx context.Context, key string, vals []int) error {
			if err := rec.Incr(ctx, tag+":starts").Err(); err != nil {
				return err
			}
			time.Sleep(5 * time.Millisecond) // the work
			for _, v := range vals {
				if err := rec.RPush(ctx, tag+":handled", v).Err(); err != nil {
					return err
				}
			}
			handled.Add(int64(len(vals)))
			return nil
		})
	require.NoError(t, err)
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", strings.TrimSpace(in.Text()))
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(ctx))
	require.NoError(t, <-ran)
	fmt.Printf("handled %d\n", handled.Load())
}
