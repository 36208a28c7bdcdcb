package redisrate

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// TestMeasureTriesCost prints the server's time (INFO commandstats) per
// call and per key of TakeKey's functions on a server of its own, with
// 1 key a call (try.lua, a call alone) and 2, 4 and 8 (tries.lua, a
// flight), over 4,000 takes of 500 keys that all conform, in 3 rounds:
// what a flight saves is the function's fixed part.
//
//	PACER_BENCH=1 go test -count=1 -run 'TestMeasureTriesCost$' -v ./redis/redisrate/
func TestMeasureTriesCost(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	srv := redistest.StartServer(t)
	c := redistest.Dial(t, &redis.Options{Addr: srv.Addr()})
	k := newTestKeyed(t, c, 1e6, 1000)
	ctx := t.Context()
	fcallUS := func() (float64, float64) {
		s := c.Info(ctx, "commandstats").Val()
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "cmdstat_fcall:") {
				f := strings.Split(strings.TrimSpace(strings.TrimPrefix(l, "cmdstat_fcall:")), ",")
				calls, _ := strconv.ParseFloat(strings.TrimPrefix(f[0], "calls="), 64)
				us, _ := strconv.ParseFloat(strings.TrimPrefix(f[1], "usec="), 64)
				return calls, us
			}
		}
		return 0, 0
	}
	const keys = 4000
	for round := range 3 {
		for _, n := range []int{1, 2, 4, 8} {
			c0, u0 := fcallUS()
			for i := 0; i < keys; i += n {
				var ks []string
				for j := range n {
					ks = append(ks, fmt.Sprint("k", (i+j)%500))
				}
				if n == 1 {
					_, err := k.takes.One(ctx, ks[0])
					require.NoError(t, err)
				} else {
					_, err := k.tries(ctx, ks)
					require.NoError(t, err)
				}
			}
			c1, u1 := fcallUS()
			fmt.Printf("round %d, %d keys a call: %.0f calls, %.2f µs a call, %.2f µs a key\n", round, n, c1-c0, (u1-u0)/(c1-c0), (u1-u0)/keys)
		}
	}
}
