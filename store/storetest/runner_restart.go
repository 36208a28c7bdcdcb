package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A Stop is one way to stop a store's server, for RunRestart.
type Stop struct {
	Name string // how it stops, for the log: "SIGTERM"
	Do   func() // stops the server and returns once it is down
}

// RunRestart runs a Runner on s, whose server the test owns, and adds
// values to it without pause while the server is stopped, by each of stops
// in turn, and started again by start on the same address and data. It
// checks that:
//
//   - while the server is down, Add returns an error at once (every Add
//     that failed took under a second), and the Runner counts none of them
//     received: nothing is buffered in the process;
//   - the workers back off while the server is down (their claims fail
//     once per pause, not in a loop) and resume by themselves once it is
//     back;
//   - every value whose Add returned nil is handled, those added before a
//     stop included.
//
// What survives a restart of the server is up to the server: the test must
// start it so that a write it acknowledged is not lost.
func RunRestart(t *testing.T, s store.Store, start func(), stops ...Stop) {
	var mu sync.Mutex
	handled := map[int]int{}
	began := time.Now()
	calls := map[string][]string{} // by key: the batches handled, for the failure's report
	var up, resumed time.Time      // when the server was back, and the first call after
	h := func(ctx context.Context, key string, batch []int) error {
		mu.Lock()
		if !up.IsZero() && resumed.IsZero() {
			resumed = time.Now()
		}
		mu.Unlock()
		pause := time.NewTimer(rand.N(2 * time.Millisecond))
		defer pause.Stop()
		select {
		case <-pause.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range batch {
			handled[v]++
		}
		calls[key] = append(calls[key], fmt.Sprintf("%v: %v", time.Since(began).Round(time.Microsecond), batch))
		return nil
	}
	claims := &countingHandler{msg: "pacer: store failed, the workers wait"}
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "restart", Workers: 2,
		LeaseTTL: time.Second, Logger: slog.New(claims)}, h)
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(context.Background()) }()

	// The adder adds values 1, 2, ... to 50 keys, one after the other.
	type added struct {
		v    int
		err  error
		at   time.Duration // since the test began
		took time.Duration
	}
	var (
		results    []added
		ok, failed atomic.Int64
	)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for v := 1; ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			at := time.Now()
			err := r.Add(ctx, fmt.Sprint("k", v%50), v)
			took := time.Since(at)
			cancel()
			mu.Lock()
			results = append(results, added{v, err, at.Sub(began), took})
			mu.Unlock()
			if err == nil {
				ok.Add(1)
			} else {
				failed.Add(1)
			}
			time.Sleep(time.Millisecond) // paces the adder
		}
	}()
	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, d, 5*time.Millisecond, what)
	}

	var downs, events []string
	for _, how := range stops {
		okAtUp := ok.Load()
		waitFor("200 values added", 20*time.Second, func() bool { return ok.Load() >= okAtUp+200 })
		mu.Lock()
		events = append(events, fmt.Sprintf("%v: %s sent", time.Since(began).Round(time.Microsecond), how.Name))
		mu.Unlock()
		how.Do()
		down := time.Now()
		mu.Lock()
		events = append(events, fmt.Sprintf("%v: down", down.Sub(began).Round(time.Microsecond)))
		mu.Unlock()
		failedAtDown, claimsAtDown := failed.Load(), claims.n.Load()
		waitFor("Adds fail and the workers back off twice", 10*time.Second, func() bool {
			return failed.Load() >= failedAtDown+50 && claims.n.Load() >= claimsAtDown+2
		})
		downFor := time.Since(down)
		failedWhileDown, claimsWhileDown := failed.Load()-failedAtDown, claims.n.Load()-claimsAtDown
		start()
		mu.Lock()
		up, resumed = time.Now(), time.Time{}
		events = append(events, fmt.Sprintf("%v: up", up.Sub(began).Round(time.Microsecond)))
		mu.Unlock()
		waitFor("the workers resume", 10*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return !resumed.IsZero()
		})
		// The claims fail once per pause: at most once per LeaseTTL, which
		// caps the backoff, and once more at each end.
		require.LessOrEqual(t, claimsWhileDown, int64(downFor/time.Second)+2, "the workers back off")
		mu.Lock()
		downs = append(downs, fmt.Sprintf("%s: down for %v, %d Adds refused, %d failed claims, resumed %v after the server was back",
			how.Name, downFor.Round(time.Millisecond), failedWhileDown, claimsWhileDown, resumed.Sub(up).Round(time.Millisecond)))
		mu.Unlock()
	}
	okAtUp := ok.Load()
	waitFor("200 more values added", 20*time.Second, func() bool { return ok.Load() >= okAtUp+200 })
	close(stop)
	<-stopped
	waitFor("every value handled", 30*time.Second, func() bool {
		st, err := r.Stats(context.Background())
		return err == nil && st.Values == 0
	})
	mu.Lock()
	drained := time.Since(up)
	mu.Unlock()
	st, err := r.Stats(context.Background())
	require.NoError(t, err)
	require.Zero(t, st.Dead, "no dead letter")
	require.Equal(t, uint64(ok.Load()), st.Received, "only the values Add accepted are counted received")
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.Shutdown(stopCtx))
	require.NoError(t, <-ran)

	mu.Lock()
	defer mu.Unlock()
	var took []time.Duration // by the Adds that failed
	failedHandled := 0
	for _, a := range results {
		if a.err != nil {
			took = append(took, a.took)
		}
		switch {
		case a.err == nil && handled[a.v] == 0:
			key := fmt.Sprint("k", a.v%50)
			t.Fatalf("value %d: Add returned nil, but it was not handled\nits Add began at %v and took %v\nthe stops: %v\nthe batches of key %s: %v",
				a.v, a.at.Round(time.Microsecond), a.took.Round(time.Microsecond), events, key, calls[key])
		case a.err != nil && handled[a.v] > 0:
			failedHandled++ // stored, but its reply lost
		}
	}
	slices.Sort(took)
	slowest := took[len(took)-1]
	require.Less(t, slowest, time.Second, "every Add that failed returned within a second")
	t.Logf("%d values accepted and handled, %d refused (%d of them handled anyway: stored, the reply lost); failed Adds took %v (median), %v at most; done %v after the server was last back",
		ok.Load(), failed.Load(), failedHandled, took[len(took)/2].Round(time.Microsecond), slowest.Round(time.Microsecond), drained.Round(time.Millisecond))
	for _, d := range downs {
		t.Log(d)
	}
}

// countingHandler is a slog.Handler that counts the records with message
// msg.
type countingHandler struct {
	msg string
	n   atomic.Int64
}

func (h *countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}

func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
