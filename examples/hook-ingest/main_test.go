package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// childEnv, in the environment, makes the test binary play a child
// process instead of running the tests: "program" runs the program on its
// arguments, "event" an event process of the demo (see demoEvent).
const childEnv = "HOOK_INGEST_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "program":
		main()
	case "event":
		os.Exit(demoEvent(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// TestDemo plays the demo on fake time, with the remote served in process,
// and checks its report.
func TestDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rem := newRemote("t", 50*time.Millisecond, nil)
		quiet, maxWait := 2*time.Second, 6*time.Second
		hc := &http.Client{Transport: hookhttp.InProcess{Handler: rem}}
		p := params{Quiet: quiet, MaxWait: maxWait, Deliver: httpDeliver(hc, "http://remote.invalid/batches", "t")}
		r, err := play(t.Context(), p, t.TempDir(), defaultPlans(quiet, maxWait), rem)
		require.NoError(t, err)
		var out strings.Builder
		r.print(&out)
		t.Log("\n" + out.String())
		require.True(t, r.OK(), out.String())
		require.Contains(t, out.String(), "all checks held")
		requireSessionsHeld(t, r, 3)
		require.Equal(t, 1, r.Sessions[0].Runs, "burst")
		require.Equal(t, 2, r.Sessions[1].Runs, "two-bursts")
	})
}

// requireSessionsHeld checks that r has n sessions and every guarantee
// held in each, and that no process failed.
func requireSessionsHeld(t *testing.T, r report, n int) {
	t.Helper()
	require.Len(t, r.Sessions, n)
	for _, s := range r.Sessions {
		require.Empty(t, s.Lost, s.Session)
		require.Empty(t, s.Dup, s.Session)
		require.Zero(t, s.Overlaps, s.Session)
		require.LessOrEqual(t, s.Concurrent, 1, s.Session)
		require.Less(t, s.Runs, s.Events, s.Session)
		require.Zero(t, s.Refused, "%s: nothing was sent twice", s.Session)
		if s.Busy {
			require.Positive(t, s.Reasons[reasonMaxWait])
		}
		if s.Session != "crash" {
			require.Zero(t, s.Died, s.Session)
		}
	}
	require.Empty(t, r.Failures)
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
	ev := func(ids ...string) []event {
		var es []event
		for _, id := range ids {
			es = append(es, event{ID: id, At: at})
		}
		return es
	}
	plans := []plan{{Session: "a", At: series(0, 3, time.Millisecond), Busy: true}, {Session: "b", At: series(0, 1, time.Millisecond)}}
	applied := []batch{
		{"a", claim{Reason: reasonQuiet, Events: ev("1", "2")}},
		{"a", claim{Reason: reasonQuiet, Events: ev("2")}},
		{"b", claim{Reason: reasonQuiet, Events: ev("1")}},
	}
	logs := map[string][]batchRun{"a": {
		{claim: claim{Run: "1", Events: ev("1", "2")}, Start: at, End: at.Add(time.Second), Overlapped: true},
		{claim: claim{Run: "2", Events: ev("2")}, Start: at, End: at.Add(time.Second)},
	}}
	rem := &remote{applied: applied, sessions: map[string]*remoteSession{"b": {maxActive: 2}}}
	r := buildReport(plans, []string{"a event 3: context canceled"}, logs, rem, time.Second)
	require.False(t, r.OK())
	require.Equal(t, []string{"3"}, r.Sessions[0].Lost)
	require.Equal(t, []string{"2"}, r.Sessions[0].Dup)
	for _, c := range r.Checks {
		require.False(t, c.OK, "every check fails: %+v", r.Checks)
	}
	require.Len(t, r.Checks, 5)
}
