package storetest

import (
	"context"
	"fmt"
	"slices"
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

// The timings of runPauseProcesses, which has real processes and so no
// fake time: how long a handler works on a batch; how long after
// PauseQueue returned, and every batch that started had ended, a batch
// leased before the pause may still report its start (its process was
// between the Claim's reply and the handler, which takes microseconds);
// how long a paused queue must then lease nothing, several times the
// interval at which an engine polls for work that no notification
// announced; and how long all the rest may take.
const (
	pauseWork   = 20 * time.Millisecond
	pauseGrace  = 500 * time.Millisecond
	pauseWindow = 2 * time.Second
	pauseLimit  = time.Minute
)

// runPauseProcesses is the "OperatorPause" scenario of RunProcesses, for
// an engine that implements store.Operator: 3 OS processes run pacer
// Runners (2 workers each) on one queue, whose handlers report the start
// and the end of each batch, with its fence. While they handle values,
// the test pauses the queue from its own store, p.Store, and adds more
// values, which land. From then on, no batch starts: not one that holds
// a value added after the pause (which no lease taken before the pause
// can hold) until the resume, nor any at all once the batches that were
// running have ended and pauseGrace has passed, for pauseWindow. Resumed,
// the processes handle every value, each at least once, and the queue
// ends empty.
func runPauseProcesses(t *testing.T, p Processes) {
	op, ok := p.Store.(store.Operator)
	if !ok {
		t.Skip("the engine does not implement store.Operator")
	}
	const procs, keys = 3, 12
	q, ctx := t.Name(), t.Context()
	adder, err := pacer.New(pacer.Config[string, string]{Store: p.Store, Name: q},
		func(context.Context, string, []string) error { return nil })
	require.NoError(t, err)
	defer func() { require.NoError(t, adder.Shutdown(context.Background())) }()
	add := func(prefix string, n int) []string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprint(prefix, i)
			require.NoError(t, adder.Add(ctx, fmt.Sprint("k", i%keys), vals[i]))
		}
		return vals
	}

	events := make(chan batchEvent, 1024)
	children := make([]*Process, procs)
	var readers sync.WaitGroup
	for i := range children {
		c := StartProcess(t, p.Child, processEnv, p.Where, childPause, q)
		children[i] = c
		readers.Go(func() {
			for line, ok := c.Scan(); ok; line, ok = c.Scan() {
				events <- parseBatchEvent(i, line)
			}
		})
	}
	for _, c := range children {
		c.Go(t)
	}
	w := &pauseWatch{t: t, events: events, running: map[string]batchEvent{}, ended: map[string]int{}}

	// Running: the processes start batches.
	before := add("a", 120)
	w.until("the processes started 6 batches", func() bool { return w.starts >= 6 })

	// Paused: values land, running batches end, and none start.
	ok, err = op.PauseQueue(ctx, q)
	require.NoError(t, err)
	require.True(t, ok, "PauseQueue of a running queue")
	paused := time.Now()
	after := add("b", 30)
	w.paused = true
	w.until("the batches running at the pause ended", func() bool {
		return len(w.running) == 0 && time.Since(paused) >= pauseGrace
	})
	w.quiet = true
	w.during(pauseWindow)
	st, err := p.Store.Stats(ctx, q)
	require.NoError(t, err)
	require.True(t, st.Paused, "Stats.Paused")
	require.GreaterOrEqual(t, st.Values, len(after), "the values added to the paused queue landed")

	// Resumed: every value is handled.
	ok, err = op.ResumeQueue(ctx, q)
	require.NoError(t, err)
	require.True(t, ok, "ResumeQueue of a paused queue")
	w.paused, w.quiet = false, false
	all := append(before, after...)
	w.until("every value was handled", func() bool {
		return !slices.ContainsFunc(all, func(v string) bool { return w.ended[v] == 0 })
	})
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
	require.GreaterOrEqual(t, w.handled, len(all), "values the processes handled")
	deadline := time.Now().Add(pauseLimit)
	for {
		st, err = p.Store.Stats(ctx, q)
		require.NoError(t, err)
		if st.Values == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "values left in the queue: %+v", st)
		time.Sleep(10 * time.Millisecond)
	}
}

// A batchEvent is a line of a process of runPauseProcesses: the start or
// the end of a batch, or how many values the process handled in all.
type batchEvent struct {
	child   int
	line    string
	start   bool
	id      string // the key and the fence of the batch's lease
	values  []string
	handled int // of a "handled N" line
	other   bool
	err     error
}

// parseBatchEvent parses a line of process child: "start FENCE KEY
// V1,V2...", "end FENCE KEY", "handled N", or a line of the test binary's
// own.
func parseBatchEvent(child int, line string) batchEvent {
	ev := batchEvent{child: child, line: line}
	f := strings.Fields(line)
	switch {
	case len(f) == 4 && f[0] == "start":
		ev.start, ev.id, ev.values = true, f[2]+"@"+f[1], strings.Split(f[3], ",")
	case len(f) == 3 && f[0] == "end":
		ev.id = f[2] + "@" + f[1]
	case len(f) == 2 && f[0] == "handled":
		ev.handled, ev.err = strconv.Atoi(f[1])
	case len(f) > 0 && (f[0] == "start" || f[0] == "end" || f[0] == "handled"):
		ev.err = fmt.Errorf("not a line of a process: %q", line)
	default:
		ev.other = true // the test binary's own, "PASS" say
	}
	return ev
}

// pauseWatch follows the batches of runPauseProcesses.
type pauseWatch struct {
	t      *testing.T
	events <-chan batchEvent
	// paused: the queue is paused, so no batch that holds a value added
	// since may start; quiet: nor any batch at all.
	paused, quiet bool
	starts        int
	running       map[string]batchEvent // by id
	ended         map[string]int        // how many times each value's batch ended
	handled       int
}

// see takes in one event.
func (w *pauseWatch) see(ev batchEvent) {
	w.t.Helper()
	require.NoError(w.t, ev.err, "process %d", ev.child)
	switch {
	case ev.other:
	case ev.start:
		require.False(w.t, w.quiet, "process %d started a batch while the queue was paused, %v after the batches running at the pause ended: %s",
			ev.child, pauseGrace, ev.line)
		if w.paused {
			for _, v := range ev.values {
				require.False(w.t, strings.HasPrefix(v, "b"),
					"process %d started a batch that holds a value added after PauseQueue, before ResumeQueue: %s", ev.child, ev.line)
			}
		}
		w.starts++
		w.running[ev.id] = ev
	case ev.handled > 0:
		w.handled += ev.handled
	default:
		start, ok := w.running[ev.id]
		require.True(w.t, ok, "process %d ended a batch it did not start: %s", ev.child, ev.line)
		delete(w.running, ev.id)
		for _, v := range start.values {
			w.ended[v]++
		}
	}
}

// until takes in events until done reports true, or fails after
// pauseLimit.
func (w *pauseWatch) until(what string, done func() bool) {
	w.t.Helper()
	limit := time.After(pauseLimit)
	for !done() {
		select {
		case ev := <-w.events:
			w.see(ev)
		case <-time.After(10 * time.Millisecond):
		case <-limit:
			require.Fail(w.t, "the processes took too long", "%s: not within %v", what, pauseLimit)
		}
	}
}

// during takes in the events of d.
func (w *pauseWatch) during(d time.Duration) {
	w.t.Helper()
	end := time.After(d)
	for {
		select {
		case ev := <-w.events:
			w.see(ev)
		case <-end:
			return
		}
	}
}

// childHandle is a process of runPauseProcesses: a pacer Runner on queue
// q, with 2 workers, whose handler prints "start FENCE KEY V1,V2..." when
// it starts a batch and "end FENCE KEY" when it is done with it, after
// pauseWork. It runs from "go" on standard input until standard input
// closes; then it shuts down and prints how many values it handled, as
// "handled N".
func childHandle(t *testing.T, s store.Store, q string) {
	say := printer()
	var handled atomic.Int64
	r, err := pacer.New(pacer.Config[string, string]{Store: s, Name: q, Workers: 2, MaxBatch: 4},
		func(ctx context.Context, key string, batch []string) error {
			fence, _ := pacer.Fence(ctx)
			say("start %d %s %s", fence, key, strings.Join(batch, ","))
			time.Sleep(pauseWork) // work, so that the pause finds batches running
			say("end %d %s", fence, key)
			handled.Add(int64(len(batch)))
			return nil
		})
	require.NoError(t, err)
	runUntilClosed(t, r, say)
	say("handled %d", handled.Load())
}
