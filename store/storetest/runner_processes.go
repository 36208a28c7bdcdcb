package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// Processes is what RunProcesses needs from the engine.
type Processes struct {
	// Store is the engine, on the data that Where names: RunProcesses
	// counts on it the values that the processes stored. It never closes
	// it.
	Store store.Store
	// Where tells a process where that data is: it is what the open
	// function given to Child takes to return a store on the same data as
	// Store (a key prefix, a schema). It must hold no white space.
	Where string
	// Child names the engine's test that calls Child: a top-level test of
	// the same test binary, which each process runs alone.
	Child string
	// KeyGate, when set, makes the engine's limit per key for the
	// "KeyLimit" scenario, which skips without it. The engine's test gives
	// Child the same function, for the processes.
	KeyGate KeyGateFunc
	// Gauge, when set, opens the Gauge on the engine's server for the data
	// that Where names, for the "PerKey" scenario, which skips without it.
	// The engine's test gives Child the same function, for the processes.
	Gauge GaugeFunc
}

// A KeyGateFunc returns a ratelimit.KeyGate with l's rate and burst per
// key, kept on the engine's server with the data that where names, so
// that every process that calls it with the same where and l.Name shares
// each key's bucket: a redisrate.Keyed for Redis, a pgrate.Keyed for
// PostgreSQL. It fails t if it cannot, and releases what it holds when t
// ends.
type KeyGateFunc func(t *testing.T, where string, l KeyRate) ratelimit.KeyGate[string]

// A GaugeFunc returns the Gauge kept on the engine's server with the data
// that where names: every process that calls it with the same where
// shares its counts. It fails t if it cannot.
type GaugeFunc func(t *testing.T, where string) Gauge

// KeyRate is the limit per key that a KeyGateFunc makes: Burst events at
// once, Rate a second after that, under the name Name.
type KeyRate struct {
	Name  string
	Rate  float64
	Burst int
}

// RunProcesses runs the multi-process scenarios, each as a subtest. In
// "MaxValues", it starts 3 OS processes (see StartProcess) that run the
// test p.Child, each of which adds up to 50 values to one queue through a
// pacer Runner with Config.MaxValues 50, on a store of its own on p.Where;
// it lets them add at once, and checks that the values they stored
// together are 50 exactly, as p.Store counts them: the engine checked one
// bound for all of them, atomically with each Add. "OperatorPause", where
// p.Store implements store.Operator, is runPauseProcesses; "KeyLimit",
// where p.KeyGate is set, is runKeyLimitProcesses; "KeyRate", where
// p.Store implements store.KeyRateClaimer, runKeyRateProcesses; "PerKey", where
// p.Store implements store.PerKeyClaimer and p.Gauge is set, is
// runPerKeyProcesses; "Tenants", where p.Store implements
// store.FairTenants, runTenantProcesses.
func RunProcesses(t *testing.T, p Processes) {
	t.Helper()
	t.Run("MaxValues", func(t *testing.T) { runMaxValuesProcesses(t, p) })
	t.Run("OperatorPause", func(t *testing.T) { runPauseProcesses(t, p) })
	t.Run("KeyLimit", func(t *testing.T) { runKeyLimitProcesses(t, p) })
	t.Run("KeyRate", func(t *testing.T) { runKeyRateProcesses(t, p) })
	t.Run("PerKey", func(t *testing.T) { runPerKeyProcesses(t, p) })
	t.Run("Tenants", func(t *testing.T) { runTenantProcesses(t, p) })
}

// runMaxValuesProcesses is the "MaxValues" scenario of RunProcesses.
func runMaxValuesProcesses(t *testing.T, p Processes) {
	const bound, procs = 50, 3
	q := t.Name()
	var children []*Process
	for range procs {
		children = append(children, StartProcess(t, p.Child, processEnv, p.Where, childMaxValues, q, strconv.Itoa(bound)))
	}
	for _, c := range children {
		c.Go(t)
	}
	stored := 0
	for _, c := range children {
		n, _ := c.Stop(t)
		stored += n
	}
	require.Equal(t, bound, stored, "values the processes' Adds stored")
	st, err := p.Store.Stats(t.Context(), q)
	require.NoError(t, err)
	require.Equal(t, bound, st.Values, "values in the store")
}

// processEnv is set in the environment of the processes of RunProcesses:
// where the data is, what the process does (childMaxValues, childPause,
// childKeyLimit or childPerKey), and that scenario's arguments.
const processEnv = "PACER_STORETEST_PROCESS"

// What a process of RunProcesses does.
const (
	childMaxValues = "maxvalues"
	childPause     = "pause"
	childKeyLimit  = "keylimit"
	childKeyRate   = "keyrate"
	childPerKey    = "perkey"
)

// Child is the body of the test that Processes.Child names: in a process
// that RunProcesses started, it runs the process's part of a scenario on
// the store that open returns for Processes.Where, and with the
// ratelimit.KeyGate that keyGate returns for it, when the scenario needs
// one: keyGate is Processes.KeyGate, nil if that is. Run on its own, not
// as a process, the test skips.
//
// For "MaxValues", it makes a pacer Runner with Config.MaxValues, which it
// does not run. Once "go" comes on standard input it adds up to the bound,
// one value at a time, to a few keys that the other processes add to as
// well; Add may refuse them with ErrFull, and with no other error. Once
// standard input closes, it prints how many values Add accepted, as
// "handled N" (see Process.Stop). For "OperatorPause", see
// runPauseProcesses; for "KeyLimit", runKeyLimitProcesses; for
// "KeyRate", runKeyRateProcesses; for "PerKey",
// runPerKeyProcesses, with the Gauge that gauge returns (gauge is
// Processes.Gauge, nil if that is); for "Tenants", runTenantProcesses.
func Child(t *testing.T, open func(t *testing.T, where string) store.Store, keyGate KeyGateFunc, gauge GaugeFunc) {
	f := ProcessArgs(t, processEnv)
	require.GreaterOrEqual(t, len(f), 3, "the arguments of a process")
	s := open(t, f[0])
	switch f[1] {
	case childMaxValues:
		require.Len(t, f, 4)
		bound, err := strconv.Atoi(f[3])
		require.NoError(t, err)
		childAddBound(t, s, f[2], bound)
	case childPause:
		childHandle(t, s, f[2])
	case childKeyLimit:
		require.Len(t, f, 5)
		require.NotNil(t, keyGate, "Child needs the keyGate that Processes.KeyGate is")
		l, err := parseKeyRate(f[2], f[3], f[4])
		require.NoError(t, err)
		childKeyLimited(t, s, keyGate(t, f[0], l), f[2])
	case childKeyRate:
		require.Len(t, f, 4)
		burst, err := strconv.Atoi(f[3])
		require.NoError(t, err)
		childKeyRated(t, s, f[2], burst)
	case childPerKey:
		require.NotNil(t, gauge, "Child needs the gauge that Processes.Gauge is")
		childPerKeyHandle(t, s, gauge(t, f[0]), f[2])
	case childTenants:
		childRunTenants(t, s, f[2])
	default:
		require.Failf(t, "a process of RunProcesses", "unknown part %q", f[1])
	}
}

// childAddBound is a process of runMaxValuesProcesses.
func childAddBound(t *testing.T, s store.Store, q string, bound int) {
	ctx := context.Background()
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: q, MaxValues: bound},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", in.Text())
	accepted := 0
	for i := range bound {
		err := r.Add(ctx, fmt.Sprint(i%5), i)
		if err != nil {
			require.ErrorIs(t, err, pacer.ErrFull)
			continue
		}
		accepted++
	}
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(ctx))
	fmt.Printf("handled %d\n", accepted)
}

// printer returns a function that prints a line to standard output, one
// caller at a time, for the processes whose workers all report there.
func printer() func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
}

// runUntilClosed is the life of a process's Runner r: it says "ready",
// runs r from "go" on standard input until standard input closes, and
// then shuts r down, which must succeed.
func runUntilClosed(t *testing.T, r *pacer.Runner[string, string], say func(format string, args ...any)) {
	say("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", in.Text())
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(context.Background()))
	require.NoError(t, <-done)
}
