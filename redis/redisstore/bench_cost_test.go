package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// TestMeasureServerCost: the server's time in the functions (INFO
// commandstats), and the commands they run, per value, of a queue of
// 20,000 values over 500 keys claimed and acked by one worker, 8 keys a
// Claim, in strict (MaxBatch 1) and coalesce (MaxBatch 0) modes: the same
// work on every run, so that two versions of the functions compare by the
// server's own accounting, which the machine's other work disturbs less
// than a wall clock.
func TestMeasureServerCost(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "cost"})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"strict", 1}, {"coalesce", 0}} {
		for round := range 3 {
			q := fmt.Sprintf("%s-%d", mode.name, round)
			var next atomic.Int64
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < 20000; i = next.Add(1) - 1 {
						assertNoError(t, s.Add(ctx, q, strconv.Itoa(int(i%500)), [][]byte{[]byte(strconv.Itoa(int(i)))}, store.AddParams{}))
					}
				})
			}
			wg.Wait()
			require.NoError(t, c.ConfigResetStat(ctx).Err())
			t0 := time.Now()
			n := 0
			for {
				ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 8, MaxBatch: mode.maxBatch, TTL: time.Minute})
				require.NoError(t, err)
				if len(ls) == 0 {
					break
				}
				for _, l := range ls {
					n += len(l.Values)
					_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
					require.NoError(t, err)
				}
			}
			took := time.Since(t0)
			require.Equal(t, 20000, n)
			info := c.Info(ctx, "commandstats").Val()
			var fcalls int
			var fusec float64
			cmds := 0
			for _, line := range strings.Split(info, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "cmdstat_") {
					continue
				}
				var calls int
				var usec float64
				name, rest, _ := strings.Cut(line, ":")
				_, err := fmt.Sscanf(rest, "calls=%d,usec=%f,", &calls, &usec)
				require.NoError(t, err, line)
				switch name {
				case "cmdstat_fcall":
					fcalls, fusec = calls, usec
				case "cmdstat_config", "cmdstat_info":
				default:
					cmds += calls
				}
			}
			fmt.Printf("cost %s: %.2f µs of function time a value, %.3f commands a value in the functions, %d calls, wall %v\n",
				mode.name, fusec/20000, float64(cmds)/20000, fcalls, took.Round(time.Millisecond))
		}
	}
}
