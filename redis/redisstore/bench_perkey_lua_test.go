package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// perKeyLuaLoop, after lib.lua and lib_perkey.lua in one script, leases
// and acks a queue's values as TestMeasurePerKeyFunctionsAgainstOld's
// calls do: 8 leases claimed (MaxBatch 2), then each ended by an Ack and
// one more key claimed, with the steps finish.lua takes, ARGV[3] times.
// ARGV[1] is the queue's prefix, ARGV[2] the Claims' PerKey. It returns
// how many leases it ended. The calls of earlier versions' lib.lua take
// the same arguments, or fewer (Lua drops the others).
const perKeyLuaLoop = `
begin(ARGV[1])
local perkey, n = tonumber(ARGV[2]), tonumber(ARGV[3])
local leases, next = {}, 1
local function take(c)
  local i = 2
  while i <= #c do
    leases[#leases + 1] = {c[i], str(c[i + 1])}
    i = i + 4 + c[i + 3]
  end
end
local now, now_s = clock()
fold()
take(claim_ready(now, now_s, 8, 2, 60000000, 'h', perkey, 0, 0))
local done = 0
while done < n and next <= #leases do
  local l = leases[next]
  next = next + 1
  begin(ARGV[1])
  now, now_s = clock()
  fold()
  local more = finish_lease(l[1], l[2], 1, 0, '', now, now_s, perkey > 1)
  flush_ends()
  if more >= 0 then
    take(claim_ready(now, now_s, 1, 2, 60000000, 'h', perkey, 0, 0))
  end
  done = done + 1
end
return done
`

// TestMeasurePerKeyLua measures the server's CPU for the work of one
// FinishAndClaim, PerKey 1 against 2 (MaxBatch 2 both), without a round
// trip or a call of a function each: the library's own code (lib.lua
// and lib_perkey.lua of lua/, or of the lua/ directory
// PACER_BENCH_OLD_LUA names, measured beside it) runs in one EVAL that
// leases and acks 2,400 times over 5,000 values (perKeyLuaLoop), and
// INFO's CPU around it, over the calls, is the figure. Each count of keys
// in PACER_BENCH_KEYS (a list, default 20,500) runs in
// PACER_BENCH_ROUNDS (8) rounds, the order of the variants turned each
// round. With few keys a key's state stays in the CPU's caches between
// its calls; with many, every call finds it cold, as a Runner over many
// keys does.
func TestMeasurePerKeyLua(t *testing.T) {
	benchOnly(t)
	ctx := context.Background()
	c := benchClient(t, redistest.StartServer(t).Addr())
	libs := map[string]string{"new": "lua"}
	if dir := os.Getenv("PACER_BENCH_OLD_LUA"); dir != "" {
		libs["old"] = dir
	}
	scripts := map[string]string{}
	for v, dir := range libs {
		var src strings.Builder
		for _, f := range []string{"lib.lua", "lib_perkey.lua"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			src.Write(b)
		}
		src.WriteString(perKeyLuaLoop)
		// Loaded once, so that no run pays for compiling it.
		sha, err := c.ScriptLoad(ctx, src.String()).Result()
		require.NoError(t, err)
		scripts[v] = sha
	}
	keyCounts := []int{20, 500}
	if s := os.Getenv("PACER_BENCH_KEYS"); s != "" {
		keyCounts = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			keyCounts = append(keyCounts, n)
		}
	}
	rounds := 8
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	type variant struct {
		lib    string
		perKey int
	}
	var variants []variant
	for _, v := range []string{"old", "new"} {
		if scripts[v] != "" {
			variants = append(variants, variant{v, 1}, variant{v, 2})
		}
	}
	const values, calls = 5000, 2400
	n := 0
	for _, keys := range keyCounts {
		cpu := map[variant][]float64{}
		for round := range rounds {
			order := slices.Clone(variants)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, v := range order {
				n++
				s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: fmt.Sprint("pkl", n)})
				require.NoError(t, err)
				for i := range values {
					require.NoError(t, s.Add(ctx, "q", fmt.Sprintf("k%03d", i%keys), [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}))
				}
				_, err = s.Stats(ctx, "q") // folds the Adds
				require.NoError(t, err)
				cpu0 := redistest.ServerCPU(t, c)
				done, err := c.EvalSha(ctx, scripts[v.lib], nil, redisstore.QueuePrefix(fmt.Sprint("pkl", n), "q"), v.perKey, calls).Int()
				took := redistest.ServerCPU(t, c) - cpu0
				require.NoError(t, err)
				require.Equal(t, calls, done)
				cpu[v] = append(cpu[v], float64(took.Nanoseconds())/1e3/calls)
				s.Close()
			}
		}
		med := func(xs []float64) float64 {
			xs = slices.Clone(xs)
			slices.Sort(xs)
			return xs[len(xs)/2]
		}
		for _, lib := range []string{"old", "new"} {
			one, two := cpu[variant{lib, 1}], cpu[variant{lib, 2}]
			if len(one) == 0 {
				continue
			}
			var ratios []float64
			for i := range one {
				ratios = append(ratios, two[i]/one[i])
			}
			slices.Sort(ratios)
			fmt.Printf("perkey lua, %d keys, %s: PerKey 2 %.2f µs a call, PerKey 1 %.2f (medians of %d rounds); %.3fx (rounds' ratios %.3f-%.3f, median %.3f)\n",
				keys, lib, med(two), med(one), rounds, med(two)/med(one), ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2])
		}
		if len(cpu[variant{"old", 2}]) > 0 {
			fmt.Printf("perkey lua, %d keys: PerKey 2 new/old %.3fx\n", keys, med(cpu[variant{"new", 2}])/med(cpu[variant{"old", 2}]))
		}
	}
}
