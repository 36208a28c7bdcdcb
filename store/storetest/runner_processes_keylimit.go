package storetest

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

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// The limit and the load of runKeyLimitProcesses. Each key may have
// keyBurst calls at once and keyRate a second after that: one every
// 200 ms, a whole number of microseconds, as the engines keep times. The
// keyHot keys have more values than that, the keyCold keys one each.
const (
	keyRate      = 5.0
	keyBurst     = 2
	keyHot       = 3
	keyHotValues = 12
	keyCold      = 20
)

// The timings of runKeyLimitProcesses: how soon after "go" every cold
// key's call must have started, where a limit that held one key's calls
// behind another's (one bucket for all keys) would take at least
// (keyCold - keyBurst)/keyRate, 3.6 s; and how long it all may take.
const (
	keyColdLimit  = 2 * time.Second
	keyLimitTotal = time.Minute
)

// runKeyLimitProcesses is the "KeyLimit" scenario of RunProcesses, for an
// engine whose test sets Processes.KeyGate: 3 OS processes run pacer
// Runners (2 workers each, MaxBatch 1) on one queue of p.Store, each with
// a Config.KeyLimit that p.KeyGate made on p.Where, so that they share
// one bucket per key on the engine's server. The queue holds keyHot keys
// of keyHotValues values and keyCold keys of one. Each handler call
// reports its key, its value, when the TakeKey that gave its token was
// asked and when the call started, on the host's clock, which every
// process reads. The calls of each key, over all processes, keep its
// limit (checkKeyRate); the cold keys all run within keyColdLimit, not
// held back behind the hot keys' tokens; the hot keys' calls come from
// more than one process, so the processes did share their buckets; and
// every value is handled, each at least once, leaving the queue empty.
// It never pauses a key: the engine's own tests cover PauseKeyFor.
func runKeyLimitProcesses(t *testing.T, p Processes) {
	if p.KeyGate == nil {
		t.Skip("the engine's test gives no Processes.KeyGate")
	}
	runKeyRatedLoad(t, p, childKeyLimit, strconv.FormatFloat(keyRate, 'g', -1, 64), strconv.Itoa(keyBurst))
}

// runKeyRatedLoad runs the load of runKeyLimitProcesses in 3 processes
// that do child's part, with args after the queue's name, and checks what
// it checks.
func runKeyRatedLoad(t *testing.T, p Processes, child string, args ...string) {
	const procs = 3
	q, ctx := t.Name(), t.Context()
	adder, err := pacer.New(pacer.Config[string, string]{Store: p.Store, Name: q},
		func(context.Context, string, []string) error { return nil })
	require.NoError(t, err)
	defer func() { require.NoError(t, adder.Shutdown(context.Background())) }()
	var all []string
	add := func(key, v string) {
		require.NoError(t, adder.Add(ctx, key, v))
		all = append(all, v)
	}
	for i := range keyHotValues {
		for k := range keyHot {
			add(fmt.Sprint("hot", k), fmt.Sprintf("h%d-%d", k, i))
		}
	}
	for k := range keyCold {
		add(fmt.Sprint("cold", k), fmt.Sprint("c", k))
	}

	events := make(chan keyCall, 1024)
	children := make([]*Process, procs)
	var readers sync.WaitGroup
	for i := range children {
		c := StartProcess(t, p.Child, processEnv, append([]string{p.Where, child, q}, args...)...)
		children[i] = c
		readers.Go(func() {
			for line, ok := c.Scan(); ok; line, ok = c.Scan() {
				events <- parseKeyCall(i, line)
			}
		})
	}
	started := time.Now()
	for _, c := range children {
		c.Go(t)
	}

	calls := map[string][]keyCall{} // by key
	seen := map[string]int{}        // calls of each value
	handled := 0
	see := func(ev keyCall) {
		require.NoError(t, ev.err, "process %d", ev.child)
		switch {
		case ev.other:
		case ev.handled > 0:
			handled += ev.handled
		default:
			require.NotZero(t, ev.asked, "process %d called its handler with no call that took the key's token: %s", ev.child, ev.line)
			calls[ev.key] = append(calls[ev.key], ev)
			seen[ev.value]++
		}
	}
	limit := time.After(keyLimitTotal)
	for len(seen) < len(all) {
		select {
		case ev := <-events:
			see(ev)
		case <-limit:
			require.Failf(t, "the processes took too long", "%d of %d values handled within %v", len(seen), len(all), keyLimitTotal)
		}
	}
	for _, c := range children {
		c.Close(t)
	}
	go func() { readers.Wait(); close(events) }()
	for ev := range events {
		see(ev)
	}
	for _, c := range children {
		c.Wait(t)
	}

	for _, v := range all {
		require.Positive(t, seen[v], "value %s was never handled", v)
	}
	require.GreaterOrEqual(t, handled, len(all), "values the processes handled")
	hotBy := map[int]bool{}
	for key, cs := range calls {
		checkKeyRate(t, key, cs)
		for _, c := range cs {
			if strings.HasPrefix(key, "hot") {
				hotBy[c.child] = true
			} else {
				require.LessOrEqual(t, time.Duration(c.started-started.UnixNano()), keyColdLimit,
					"the call of %s started %v after go: held back behind the hot keys", key, time.Duration(c.started-started.UnixNano()))
			}
		}
	}
	require.GreaterOrEqual(t, len(hotBy), 2, "every call of the hot keys came from one process: the scenario shared no bucket")
	t.Logf("%d values handled of %d, by %d processes, in %v; the hot keys' calls by %d of them",
		handled, len(all), procs, time.Since(started).Round(time.Millisecond), len(hotBy))
	deadline := time.Now().Add(keyLimitTotal)
	for {
		st, err := p.Store.Stats(ctx, q)
		require.NoError(t, err)
		if st.Values == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "values left in the queue: %+v", st)
		time.Sleep(10 * time.Millisecond)
	}
}

// checkKeyRate fails t if the calls of key broke the limit, which the
// engine's server enforces on its clock (see CheckRate).
func checkKeyRate(t *testing.T, key string, calls []keyCall) {
	t.Helper()
	tc := make([]TokenCall, len(calls))
	for i, c := range calls {
		tc[i] = TokenCall{Asked: time.Unix(0, c.asked), Started: time.Unix(0, c.started)}
	}
	CheckRate(t, key, tc, keyRate, keyBurst)
}

// A keyCall is a line of a process of runKeyLimitProcesses: a handler
// call, or how many values the process handled in all.
type keyCall struct {
	child      int
	line       string
	key, value string
	// asked and started are the host's clock, in Unix nanoseconds, when
	// the TakeKey that gave the call its token was asked (0: none did)
	// and when the call started.
	asked, started int64
	handled        int // of a "handled N" line
	other          bool
	err            error
}

// parseKeyCall parses a line of process child: "call KEY VALUE ASKED
// STARTED", "handled N", or a line of the test binary's own.
func parseKeyCall(child int, line string) keyCall {
	ev := keyCall{child: child, line: line}
	f := strings.Fields(line)
	switch {
	case len(f) == 5 && f[0] == "call":
		ev.key, ev.value = f[1], f[2]
		var err1, err2 error
		ev.asked, err1 = strconv.ParseInt(f[3], 10, 64)
		ev.started, err2 = strconv.ParseInt(f[4], 10, 64)
		if err1 != nil || err2 != nil {
			ev.err = fmt.Errorf("not a line of a process: %q", line)
		}
	case len(f) == 2 && f[0] == "handled":
		ev.handled, ev.err = strconv.Atoi(f[1])
	case len(f) > 0 && (f[0] == "call" || f[0] == "handled"):
		ev.err = fmt.Errorf("not a line of a process: %q", line)
	default:
		ev.other = true // the test binary's own, "PASS" say
	}
	return ev
}

// parseKeyRate parses the arguments that runKeyLimitProcesses gives its
// processes: the limit's name, rate and burst.
func parseKeyRate(name, rate, burst string) (KeyRate, error) {
	r, err := strconv.ParseFloat(rate, 64)
	if err != nil {
		return KeyRate{}, fmt.Errorf("the rate of a KeyLimit process: %w", err)
	}
	b, err := strconv.Atoi(burst)
	if err != nil {
		return KeyRate{}, fmt.Errorf("the burst of a KeyLimit process: %w", err)
	}
	return KeyRate{Name: name, Rate: r, Burst: b}, nil
}

// childKeyLimited is a process of runKeyLimitProcesses: a pacer Runner on
// queue q, with 2 workers, MaxBatch 1 and gate as its Config.KeyLimit,
// whose handler prints "call KEY VALUE ASKED STARTED" as it starts (see
// keyCall). It runs from "go" on standard input until standard input
// closes; then it shuts down and prints how many values it handled, as
// "handled N".
func childKeyLimited(t *testing.T, s store.Store, gate ratelimit.KeyGate[string], q string) {
	say := printer()
	g := &tokenLog{KeyGate: gate, asked: map[string]int64{}}
	var handled atomic.Int64
	r, err := pacer.New(pacer.Config[string, string]{Store: s, Name: q, Workers: 2, MaxBatch: 1, KeyLimit: g},
		func(_ context.Context, key string, batch []string) error {
			started := time.Now().UnixNano()
			say("call %s %s %d %d", key, strings.Join(batch, ","), g.taken(key), started)
			handled.Add(int64(len(batch)))
			return nil
		})
	require.NoError(t, err)
	runUntilClosed(t, r, say)
	say("handled %d", handled.Load())
}

// tokenLog is a process's KeyGate as its Runner uses it: it notes, on the
// host's clock, when each TakeKey that gave a key's token was asked, for
// the key's call that follows. The key's lease makes that call the next
// one of the key in any process.
type tokenLog struct {
	ratelimit.KeyGate[string]
	mu    sync.Mutex
	asked map[string]int64 // Unix nanoseconds, by key
}

// TakeKey is the gate's, noting when a TakeKey that gave a token was
// asked.
func (g *tokenLog) TakeKey(ctx context.Context, key string) (time.Duration, error) {
	asked := time.Now().UnixNano()
	wait, err := g.KeyGate.TakeKey(ctx, key)
	if err == nil && wait == 0 {
		g.mu.Lock()
		g.asked[key] = asked
		g.mu.Unlock()
	}
	return wait, err
}

// taken returns when the TakeKey that gave key its last token was asked,
// and forgets it; 0 if no TakeKey gave key a token since the last call.
func (g *tokenLog) taken(key string) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	asked := g.asked[key]
	delete(g.asked, key)
	return asked
}
