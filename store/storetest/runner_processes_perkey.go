package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A Gauge is a set of named counts kept on the engine's server (a row, a
// key), apart from the engine's own data, that the processes of the
// "PerKey" scenario of RunProcesses share: each handler adds 1 to its
// key's count before it works on a batch and 1 less after, so the counts
// are the batches of each key that run at that instant, in all the
// processes.
type Gauge interface {
	// Add adds d to the count named name, atomically, and returns the
	// count it left. A count starts at 0. Safe for concurrent use.
	Add(ctx context.Context, name string, d int) (int, error)
}

// The shape of runPerKeyProcesses: PerKey of each Runner, the keys, the
// values of each key, MaxBatch and workers of each Runner, how long a
// handler works on a batch, and how long all of it may take.
const (
	perKeyLimit   = 2
	perKeyKeys    = 3
	perKeyValues  = 40
	perKeyBatch   = 2
	perKeyWorkers = 3
	perKeyWork    = 20 * time.Millisecond
	perKeyTimeout = time.Minute
)

// runPerKeyProcesses is the "PerKey" scenario of RunProcesses, for an
// engine that implements store.PerKeyClaimer and whose test gives a
// Processes.Gauge: 3 OS processes run pacer Runners with Config.PerKey 2
// (3 workers each, so 9 workers for 3 keys) on one queue that holds 40
// values of each of 3 keys. Each handler adds 1 to its key's Gauge count
// before its work and 1 less after, and reports the count it read, with
// the key and the fence of its batch. The counts read are never above 2:
// no more than PerKey batches of a key ran at once, across the
// processes; and they reach 2: batches of one key did run side by side.
// Each batch's fence is new, every value is handled, and the queue ends
// empty.
func runPerKeyProcesses(t *testing.T, p Processes) {
	if pk, ok := p.Store.(store.PerKeyClaimer); !ok || !pk.ClaimsPerKey() {
		t.Skip("the engine does not implement store.PerKeyClaimer")
	}
	if p.Gauge == nil {
		t.Skip("the engine's test gives no Processes.Gauge")
	}
	const procs = 3
	q, ctx := t.Name(), t.Context()
	gauge := p.Gauge(t, p.Where) // before the processes, which open it too
	adder, err := pacer.New(pacer.Config[string, string]{Store: p.Store, Name: q},
		func(context.Context, string, []string) error { return nil })
	require.NoError(t, err)
	defer func() { require.NoError(t, adder.Shutdown(context.Background())) }()
	var all []string
	for i := range perKeyValues * perKeyKeys {
		v := fmt.Sprint("v", i)
		all = append(all, v)
		require.NoError(t, adder.Add(ctx, fmt.Sprint("k", i%perKeyKeys), v))
	}

	events := make(chan perKeyEvent, 1024)
	children := make([]*Process, procs)
	var readers sync.WaitGroup
	for i := range children {
		c := StartProcess(t, p.Child, processEnv, p.Where, childPerKey, q)
		children[i] = c
		readers.Go(func() {
			for line, ok := c.Scan(); ok; line, ok = c.Scan() {
				events <- parsePerKeyEvent(i, line)
			}
		})
	}
	for _, c := range children {
		c.Go(t)
	}
	w := perKeyWatch{t: t, fences: map[string]bool{}, handled: map[string]int{}, most: map[string]int{}}
	limit := time.After(perKeyTimeout)
	for w.missing(all) > 0 {
		select {
		case ev := <-events:
			w.see(ev)
		case <-limit:
			require.Failf(t, "the processes took too long", "%d values not handled within %v", w.missing(all), perKeyTimeout)
		}
	}
	for _, c := range children {
		c.Close(t)
	}
	go func() { readers.Wait(); close(events) }()
	for ev := range events {
		w.see(ev)
	}
	for _, c := range children {
		c.Wait(t)
	}

	top := 0
	for k := range perKeyKeys {
		key := fmt.Sprint("k", k)
		n, err := gauge.Add(ctx, q+"/"+key, 0)
		require.NoError(t, err)
		require.Zero(t, n, "the count of key %s once every batch ended", key)
		top = max(top, w.most[key])
	}
	require.Equal(t, perKeyLimit, top,
		"the most batches of one key that ran at once, across the processes (by counts %v)", w.most)
	deadline := time.Now().Add(perKeyTimeout)
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

// A perKeyEvent is a line of a process of runPerKeyProcesses: "start
// FENCE KEY COUNT V1,V2...", where COUNT is what the handler read when it
// added itself to the key's count; "end FENCE KEY"; "handled N"; or a line
// of the test binary's own.
type perKeyEvent struct {
	child  int
	line   string
	start  bool
	id     string // the key and the fence of the batch's lease
	key    string
	count  int
	values []string
	other  bool
	err    error
}

func parsePerKeyEvent(child int, line string) perKeyEvent {
	ev := perKeyEvent{child: child, line: line}
	f := strings.Fields(line)
	switch {
	case len(f) == 5 && f[0] == "start":
		ev.start, ev.id, ev.key, ev.values = true, f[2]+"@"+f[1], f[2], strings.Split(f[4], ",")
		ev.count, ev.err = strconv.Atoi(f[3])
	case len(f) == 3 && f[0] == "end":
		ev.id, ev.key = f[2]+"@"+f[1], f[2]
	case len(f) == 2 && f[0] == "handled":
		ev.other = true
	case len(f) > 0 && (f[0] == "start" || f[0] == "end"):
		ev.err = fmt.Errorf("not a line of a process: %q", line)
	default:
		ev.other = true // the test binary's own, "PASS" say
	}
	return ev
}

// perKeyWatch follows the batches of runPerKeyProcesses.
type perKeyWatch struct {
	t       *testing.T
	running map[string]perKeyEvent // by id
	fences  map[string]bool        // every id that started
	handled map[string]int         // how many times each value's batch ended
	most    map[string]int         // the largest count read, by key
}

func (w *perKeyWatch) see(ev perKeyEvent) {
	w.t.Helper()
	require.NoError(w.t, ev.err, "process %d", ev.child)
	if w.running == nil {
		w.running = map[string]perKeyEvent{}
	}
	switch {
	case ev.other:
	case ev.start:
		require.False(w.t, w.fences[ev.id], "process %d started a batch with a fence of the key that started before: %s", ev.child, ev.line)
		w.fences[ev.id] = true
		require.LessOrEqual(w.t, ev.count, perKeyLimit,
			"process %d read %d batches of key %s running at once, with PerKey %d: %s", ev.child, ev.count, ev.key, perKeyLimit, ev.line)
		require.Positive(w.t, ev.count, "process %d: its own batch is counted: %s", ev.child, ev.line)
		w.most[ev.key] = max(w.most[ev.key], ev.count)
		w.running[ev.id] = ev
	default:
		start, ok := w.running[ev.id]
		require.True(w.t, ok, "process %d ended a batch it did not start: %s", ev.child, ev.line)
		delete(w.running, ev.id)
		for _, v := range start.values {
			w.handled[v]++
		}
	}
}

// missing counts the values of all that no batch handled yet.
func (w *perKeyWatch) missing(all []string) int {
	n := 0
	for _, v := range all {
		if w.handled[v] == 0 {
			n++
		}
	}
	return n
}

// childPerKeyHandle is a process of runPerKeyProcesses: a pacer Runner on queue
// q with PerKey perKeyLimit, whose handler adds 1 to its key's count on
// the gauge, prints "start FENCE KEY COUNT V1,V2...", works for perKeyWork,
// adds 1 less to the count, and prints "end FENCE KEY". It runs from "go"
// on standard input until standard input closes; then it shuts down and
// prints how many values it handled, as "handled N".
func childPerKeyHandle(t *testing.T, s store.Store, g Gauge, q string) {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	var handled atomic.Int64
	r, err := pacer.New(pacer.Config[string, string]{Store: s, Name: q, Workers: perKeyWorkers, PerKey: perKeyLimit, MaxBatch: perKeyBatch},
		func(ctx context.Context, key string, batch []string) error {
			fence, _ := pacer.Fence(ctx)
			n, err := g.Add(ctx, q+"/"+key, 1)
			if err != nil {
				return err
			}
			say("start %d %s %d %s", fence, key, n, strings.Join(batch, ","))
			time.Sleep(perKeyWork) // work, so that batches of a key overlap
			// The count must drop whatever the handler's ctx does: the
			// batch ends here.
			if _, err := g.Add(context.WithoutCancel(ctx), q+"/"+key, -1); err != nil {
				return err
			}
			say("end %d %s", fence, key)
			handled.Add(int64(len(batch)))
			return nil
		})
	require.NoError(t, err)
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
	say("handled %d", handled.Load())
}
