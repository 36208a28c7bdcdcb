package redisstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// twoVersions is a server of a test's own that holds this version's
// functions and another version's beside them, a Store on it, and each
// version's claim, finish and stats functions, which use has the
// package call: as in a rolling upgrade, when instances of both serve one
// queue. A test that uses it swaps the package's function names, so it
// runs alone.
type twoVersions struct {
	c        *redis.Client
	s        *Store
	old, new [3]string
}

// againstOld returns twoVersions for t, the Store's names under prefix,
// the other version's functions read from the lua/ directory that
// PACER_BENCH_OLD_LUA names (scripts/test sets it to an earlier commit's).
// Without it, it skips t, or fails it under CI. The package calls its own
// functions again once t ends.
func againstOld(t *testing.T, prefix string) *twoVersions {
	t.Helper()
	dir := os.Getenv("PACER_BENCH_OLD_LUA")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PACER_BENCH_OLD_LUA is not set: under CI, scripts/test sets it")
		}
		t.Skip("set PACER_BENCH_OLD_LUA to another version's lua/ directory")
	}
	old := oldLibrary(t, dir)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	t.Cleanup(func() { c.Close() })
	s, err := New(ctx, c, Config{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, old.Load(ctx, c))
	v := &twoVersions{c: c, s: s,
		new: [3]string{claimFn, finishFn, statsFn},
		old: [3]string{old.Function("claim"), old.Function("finish"), old.Function("stats")},
	}
	t.Cleanup(func() { v.use(v.new) })
	return v
}

// use has the package call the claim, finish and stats functions fns.
func (v *twoVersions) use(fns [3]string) { claimFn, finishFn, statsFn = fns[0], fns[1], fns[2] }

// oldLibrary returns the functions of another version's lua/ directory,
// dir, as a library of its own, to load beside this version's.
func oldLibrary(t *testing.T, dir string) *redisfn.Library {
	t.Helper()
	read := func(n string) string {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		return string(b)
	}
	names := []string{"add", "claim", "extend", "finish", "release", "stats", "deadletters", "redrive", "purge",
		"keys", "key", "values", "reindex", "pausequeue", "pausekey", "resumekey", "retrynow", "dropkey"}
	var fns []redisfn.Function
	for _, n := range names {
		src := read(n + ".lua")
		if n != "add" {
			src = strings.Replace(src, includeLib, "begin(ARGV[1])\n", 1)
		}
		fns = append(fns, redisfn.Function{Name: n, Body: src})
	}
	return redisfn.New("pacer_", read("lib.lua")+read("lib_perkey.lua")+read("lib_inspect.lua"), fns...)
}

// callTimes is the time of each function call the server ran on the
// queues it names, by queue and function, read from the slow log, which
// recordCalls has log every command. The slow log holds a bounded number
// of entries: collect it every few hundred calls.
type callTimes struct {
	c      *redis.Client
	queues []string
	durs   map[string][]float64 // by "<queue> <function>", in µs
}

// recordCalls has c's server log every command, from an empty slow log.
func recordCalls(t *testing.T, c *redis.Client, queues []string) *callTimes {
	ctx := context.Background()
	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	require.NoError(t, c.ConfigSet(ctx, "slowlog-max-len", "100000").Err())
	require.NoError(t, c.SlowLogReset(ctx).Err())
	return &callTimes{c: c, queues: queues, durs: map[string][]float64{}}
}

// collect takes the calls logged since the last collect.
func (ct *callTimes) collect(t *testing.T) {
	ctx := context.Background()
	logs, err := ct.c.SlowLogGet(ctx, -1).Result()
	require.NoError(t, err)
	require.NoError(t, ct.c.SlowLogReset(ctx).Err())
	for _, l := range logs {
		if len(l.Args) < 4 || !strings.EqualFold(l.Args[0], "fcall") {
			continue
		}
		fn := l.Args[1][strings.LastIndex(l.Args[1], "_")+1:]
		for _, q := range ct.queues {
			if strings.Contains(l.Args[3], ":"+q+"}") {
				ct.durs[q+" "+fn] = append(ct.durs[q+" "+fn], float64(l.Duration.Microseconds()))
			}
		}
	}
}

// perValue returns queue q's time a value, in µs, over its values: the
// mean of the middle half of the calls of claim and of finish (their
// interquartile mean), each times its calls, which a call the machine
// held up does not move. The slow log gives whole microseconds, so a
// median moves in steps of one (2% of a call of 45 µs); the mean of the
// middle half resolves less. It prints each median and mean, after label.
func (ct *callTimes) perValue(label, q string, values int) float64 {
	per := 0.0
	for _, fn := range []string{"claim", "finish"} {
		d := ct.durs[q+" "+fn]
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		mid := d[len(d)/4 : len(d)-len(d)/4]
		sum := 0.0
		for _, x := range mid {
			sum += x
		}
		iqm := sum / float64(len(mid))
		per += iqm * float64(len(d)) / float64(values)
		fmt.Printf("%s %-9s %-6s %5d calls logged, median %.0f µs, middle half's mean %.2f µs\n", label, q, fn, len(d), d[len(d)/2], iqm)
	}
	return per
}

// inTurns records the calls on the queues named, and has step make the
// next calls of queue i, with its version's functions fns[i] in use, a
// queue at a time in turn, until a round in which no step had calls to
// make; it collects the slow log every 200 rounds. It returns each
// queue's time a value over values (callTimes.perValue, printed after
// label).
func (v *twoVersions) inTurns(t *testing.T, label string, values int, names []string, fns [][3]string, step func(i int) bool) map[string]float64 {
	calls := recordCalls(t, v.c, names)
	for round := 0; ; round++ {
		active := 0
		for i := range names {
			v.use(fns[i])
			if step(i) {
				active++
			}
		}
		if round%200 == 0 {
			calls.collect(t)
		}
		if active == 0 {
			break
		}
	}
	calls.collect(t)
	per := map[string]float64{}
	for _, q := range names {
		per[q] = calls.perValue(label, q, values)
	}
	return per
}
