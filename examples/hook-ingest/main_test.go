package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestDemo runs the demo with real processes on scaled-down durations and
// checks its report. The event processes run a binary built from this
// package without the race detector: a race-enabled binary takes about a
// second to start, which would stretch every burst past the quiet period.
func TestDemo(t *testing.T) {
	exe := buildProgram(t)
	cfg := config{
		Dir:     t.TempDir(),
		Quiet:   300 * time.Millisecond,
		MaxWait: 900 * time.Millisecond,
		Work:    50 * time.Millisecond,
		Listen:  "127.0.0.1:0",
		Token:   "test-token",
		Exe:     exe,
		Timeout: 2 * time.Minute,
	}
	cfg.Plans = defaultPlans(cfg.Quiet, cfg.MaxWait)
	var report strings.Builder
	r, err := run(t.Context(), cfg, &report)
	require.NoError(t, err)
	t.Log("\n" + report.String())

	require.True(t, r.OK(), report.String())
	require.Len(t, r.Sessions, 4)
	events := 0
	for _, s := range r.Sessions {
		events += s.Events
		require.Empty(t, s.Lost, s.Session)
		require.Empty(t, s.Dup, s.Session)
		require.Zero(t, s.Overlaps, s.Session)
		require.LessOrEqual(t, s.Concurrent, 1, s.Session)
		require.Less(t, s.Runs, s.Events, s.Session)
		require.Zero(t, s.Refused, "%s: nothing was sent twice", s.Session)
		switch s.Session {
		case "busy":
			require.Positive(t, s.Reasons[reasonMaxWait])
		case "crash":
			require.Equal(t, 1, s.Killed)
			require.Equal(t, 1, s.Died)
			require.Equal(t, 1, s.Reasons[reasonRecovered])
			require.True(t, s.Recovered)
		default:
			require.Zero(t, s.Killed, s.Session)
			require.Zero(t, s.Died, s.Session)
		}
	}
	require.Equal(t, events, r.EventProcs)
	require.Empty(t, r.Failures)
	require.Contains(t, report.String(), "all checks held")
}

// recorder is an in-process deliverFunc that records batches and can hold
// a delivery until released.
type recorder struct {
	mu      sync.Mutex
	batches []claim
	at      []time.Time
	hold    chan struct{} // if set, deliveries wait for it to close
	started chan struct{} // receives once per delivery, if set
}

func (r *recorder) deliver(ctx context.Context, _ string, c claim) error {
	if r.started != nil {
		r.started <- struct{}{}
	}
	if r.hold != nil {
		<-r.hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, c)
	r.at = append(r.at, time.Now())
	return nil
}

func ids(c claim) []string {
	var s []string
	for _, e := range c.Events {
		s = append(s, e.ID)
	}
	return s
}

// hookEvent does what one event process does, in process. It may run on
// any goroutine.
func hookEvent(t *testing.T, p params, s session, id string) {
	if assert.NoError(t, record(t.Context(), s, id)) {
		assert.NoError(t, process(t.Context(), p, s, id))
	}
}

// An event that arrives while its session is being processed is processed
// afterwards, by a second run, and the two runs do not overlap.
func TestEventDuringProcessing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{hold: make(chan struct{}), started: make(chan struct{}, 2)}
		dir := t.TempDir()
		p := params{Quiet: 2 * time.Second, MaxWait: 2 * time.Second, Deliver: rec.deliver}
		s := newSession(dir, "s")
		var wg sync.WaitGroup
		wg.Go(func() { hookEvent(t, p, s, "1") })
		wg.Go(func() { time.Sleep(time.Second); hookEvent(t, p, s, "2") })
		<-rec.started // the batch [1 2] is being delivered
		time.Sleep(time.Second)
		wg.Go(func() { hookEvent(t, p, s, "3") })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Empty(t, rec.batches, "the first delivery is still held")
		close(rec.hold)
		wg.Wait()

		require.Len(t, rec.batches, 2)
		require.Equal(t, []string{"1", "2"}, ids(rec.batches[0]))
		require.Equal(t, []string{"3"}, ids(rec.batches[1]))
		runs, err := readRuns(s.logPath())
		require.NoError(t, err)
		require.Len(t, runs, 2)
		for _, r := range runs {
			require.True(t, r.finished())
			require.False(t, r.Overlapped)
		}
		st, err := s.load()
		require.NoError(t, err)
		require.Equal(t, state{Fence: 2}, st, "nothing pending or in flight")
	})
}

// Events for one session within the quiet period are processed once, and a
// session that never goes quiet is still processed every max-wait.
func TestQuietAndMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		dir := t.TempDir()
		p := params{Quiet: 2 * time.Second, MaxWait: 5 * time.Second, Deliver: rec.deliver}
		var wg sync.WaitGroup
		start := time.Now()
		// quiet: three events 500 ms apart; busy: an event every second for 12 s.
		for i := range 3 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 500 * time.Millisecond)
				hookEvent(t, p, newSession(dir, "quiet"), string(rune('a'+i)))
			})
		}
		for i := range 12 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * time.Second)
				hookEvent(t, p, newSession(dir, "busy"), string(rune('a'+i)))
			})
		}
		wg.Wait()

		quiet, busy := 0, map[string]time.Duration{}
		var busyIDs []string
		for i, c := range rec.batches {
			if len(c.Events) == 3 && c.Events[0].ID == "a" && c.Reason == reasonQuiet {
				quiet++
				// Due 2 s after the last event (at 1 s); LockFile polls
				// at most 50 ms apart.
				require.WithinRange(t, rec.at[i], start.Add(3*time.Second), start.Add(3100*time.Millisecond))
				continue
			}
			busyIDs = append(busyIDs, ids(c)...)
			busy[c.Reason] = max(busy[c.Reason], rec.at[i].Sub(c.Events[0].At))
		}
		require.Equal(t, 1, quiet, "the quiet session is processed once")
		require.Len(t, busyIDs, 12, "every busy event is processed once")
		require.Contains(t, busy, reasonMaxWait)
		require.LessOrEqual(t, busy[reasonMaxWait], p.MaxWait+100*time.Millisecond)
		require.Less(t, len(rec.batches)-1, 12)
	})
}

// A batch claimed by a processor that died is delivered by the next one,
// before anything newer, and the dead processor's lock does not block it.
func TestRecoverDeadProcessor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		dir := t.TempDir()
		p := params{Quiet: time.Second, MaxWait: 2 * time.Second, Deliver: rec.deliver}
		s := newSession(dir, "s")
		require.NoError(t, record(t.Context(), s, "1"))
		time.Sleep(time.Second)
		// A processor claims the batch and dies: its locks were
		// released by the kernel, its claim stays in the state.
		c, _, done, err := claimDue(t.Context(), p, s, "1")
		require.NoError(t, err)
		require.False(t, done)
		require.NotNil(t, c)
		require.NoError(t, record(t.Context(), s, "2"))
		require.NoError(t, process(t.Context(), p, s, "2"))

		require.Len(t, rec.batches, 2)
		require.Equal(t, reasonRecovered, rec.batches[0].Reason)
		require.Equal(t, []string{"1"}, ids(rec.batches[0]))
		require.Equal(t, []string{"2"}, ids(rec.batches[1]))
		runs, err := readRuns(s.logPath())
		require.NoError(t, err)
		require.Len(t, runs, 3)
		require.False(t, runs[0].finished())
		// The recovered batch keeps its key under a new fence; the next
		// batch has a key of its own.
		require.Equal(t, c.Key, rec.batches[0].Key)
		require.NotEqual(t, c.Key, rec.batches[1].Key)
		require.Equal(t, []uint64{1, 2, 3}, []uint64{runs[0].Fence, runs[1].Fence, runs[2].Fence})
	})
}

// A failed delivery puts the batch back and it is delivered later with what
// came in meanwhile.
func TestDeliveryFailureRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		fails := 2
		dir := t.TempDir()
		p := params{Quiet: time.Second, MaxWait: 2 * time.Second}
		p.Deliver = func(ctx context.Context, session string, c claim) error {
			if fails > 0 {
				fails--
				return context.DeadlineExceeded
			}
			return rec.deliver(ctx, session, c)
		}
		s := newSession(dir, "s")
		hookEvent(t, p, s, "1")
		require.Len(t, rec.batches, 1)
		require.Equal(t, []string{"1"}, ids(rec.batches[0]))
		runs, err := readRuns(s.logPath())
		require.NoError(t, err)
		require.Len(t, runs, 3)
		require.NotEmpty(t, runs[0].Err)
		require.NotEmpty(t, runs[1].Err)
		require.Empty(t, runs[2].Err)
		for i, r := range runs {
			require.Equal(t, runs[0].Key, r.Key, "every attempt sends the batch under its key")
			require.EqualValues(t, i+1, r.Fence, "every attempt takes the next fence")
		}
	})
}

// A failed batch is sent again as it was, under its key: an event that
// arrived meanwhile does not join it (had the remote applied the failed
// attempt after all, it would not know the batch), but follows in a batch
// of its own.
func TestFailedBatchIsSentAgainAsItWas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var attempts []claim
		p := params{Quiet: time.Second, MaxWait: 2 * time.Second}
		p.Deliver = func(ctx context.Context, session string, c claim) error {
			attempts = append(attempts, c)
			if len(attempts) == 1 {
				time.Sleep(time.Second) // event 2 arrives meanwhile
				return errors.New("502 Bad Gateway")
			}
			return rec.deliver(ctx, session, c)
		}
		s := newSession(t.TempDir(), "s")
		var wg sync.WaitGroup
		wg.Go(func() { hookEvent(t, p, s, "1") })
		time.Sleep(1500 * time.Millisecond) // the first attempt is under way
		wg.Go(func() { hookEvent(t, p, s, "2") })
		wg.Wait()

		require.Len(t, attempts, 3)
		require.Equal(t, []string{"1"}, ids(attempts[0]))
		require.Equal(t, []string{"1"}, ids(attempts[1]), "the retry sends the batch as it was")
		require.Equal(t, attempts[0].Key, attempts[1].Key)
		require.Equal(t, reasonQuiet, attempts[1].Reason)
		require.Equal(t, []string{"2"}, ids(attempts[2]))
		require.NotEqual(t, attempts[0].Key, attempts[2].Key)
		require.Equal(t, []uint64{1, 2, 3}, []uint64{attempts[0].Fence, attempts[1].Fence, attempts[2].Fence})
		st, err := s.load()
		require.NoError(t, err)
		require.Equal(t, state{Fence: 3}, st, "nothing pending or in flight")
	})
}

// The report's checks fail when the guarantees do not hold.
func TestReportDetectsViolations(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ev := func(id string) event { return event{ID: id, At: at} }
	cfg := config{Plans: []plan{
		{Session: "a", At: series(0, 3, time.Millisecond), Busy: true},
		{Session: "b", At: series(0, 2, time.Millisecond), Crash: true},
	}}
	received := []batch{
		{Session: "a", Reason: reasonQuiet, Events: []event{ev("1"), ev("2")}},
		{Session: "a", Reason: reasonQuiet, Events: []event{ev("2")}},
		{Session: "b", Reason: reasonQuiet, Events: []event{ev("1")}},
		{Session: "b", Reason: reasonQuiet, Events: []event{ev("2")}},
	}
	logs := map[string][]batchRun{
		"a": {
			{ID: "1", Start: at, End: at.Add(time.Second), Events: []event{ev("1"), ev("2")}, Overlapped: true},
			{ID: "2", Start: at, End: at.Add(time.Second), Events: []event{ev("2")}},
		},
		"b": {
			{ID: "3", Start: at, Events: []event{ev("1"), ev("2")}}, // died, never recovered
			{ID: "4", Start: at, End: at.Add(time.Second), Events: []event{ev("1")}},
		},
	}
	outcomes := []outcome{{Session: "a", Args: []string{"event", "-session", "a"}, Err: context.Canceled}}
	r := buildReport(cfg, outcomes, logs, remoteRecord{Applied: received, Concurrent: map[string]int{"a": 2}})
	require.False(t, r.OK())
	require.Equal(t, []string{"3"}, r.Sessions[0].Lost)
	require.Equal(t, []string{"2"}, r.Sessions[0].Dup)
	failed := 0
	for _, c := range r.Checks {
		if !c.OK {
			failed++
		}
	}
	require.Equal(t, len(r.Checks), failed, "every check fails: %+v", r.Checks)
}
