package main

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var demoDefaults = demoConfig{Events: 60, EventRate: 100, FailRate: 0.2, DownFor: 400 * time.Millisecond, Latency: 10 * time.Millisecond, Seed: 1}

// runInProcess plays the demo with the receiver reached in process, and
// makes the handler panic once, at audit #3's first call. Call it inside a
// synctest bubble.
func runInProcess(t *testing.T, retry schedule, rate float64, dc demoConfig) *report {
	t.Helper()
	secret := []byte("s3cret")
	rc := demoReceiver(dc, secret)
	d, err := newDispatcher(dispatcherConfig{
		Subs: demoSubscriptions("http://hooks.invalid"), Retry: retry,
		FIFOWorkers: 4, Workers: 8, Rate: rate, Burst: 10, Secret: secret, Timeout: time.Second,
		Transport: hookhttp.InProcess{Handler: rc},
	})
	require.NoError(t, err)
	var panicked atomic.Bool
	d.beforeSend = func(m message) {
		if m.Sub == "audit" && m.Seq == 3 && panicked.CompareAndSwap(false, true) {
			panic("audit: template for " + m.Event.Type + " is nil")
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 24*time.Hour)
	defer cancel()
	rep, err := playDemo(ctx, d, rc, dc)
	require.NoError(t, err)
	var out bytes.Buffer
	rep.print(&out)
	t.Log("\n" + out.String())
	for _, c := range rep.checks {
		require.True(t, c.ok, "check failed: %s", c.text)
	}
	require.True(t, rep.ok())
	return rep
}

func stats(rep *report, name string) subStats {
	for _, s := range rep.snap.subs {
		if s.sub.Name == name {
			return s
		}
	}
	panic("no subscription " + name)
}

func TestDemo(t *testing.T) {
	demo := schedule{Fast: 3, FastDelay: 25 * time.Millisecond, Slow: 2, SlowDelay: 250 * time.Millisecond}
	for _, tc := range []struct {
		name  string
		retry schedule
		rate  float64 // deliveries per second, all subscriptions together
	}{
		{"demo schedule", demo, 0},
		{"production schedule", schedule{Fast: 3, FastDelay: 3 * time.Second, Slow: 5, SlowDelay: 10 * time.Minute}, 0},
		// A failing receiver's retry delays leave the shared bucket alone.
		{"demo schedule, global rate", demo, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rep := runInProcess(t, tc.retry, tc.rate, demoDefaults)
				require.Len(t, rep.checks, 5)

				want := map[string]int{"orders": 32, "billing": 28, "audit": 60, "warehouse": 16, "legacy": 4, "crm": 24, "analytics": 60}
				for name, n := range want {
					s := stats(rep, name)
					require.Equal(t, n, s.published, name)
					require.Zero(t, s.depth, name)
					if name == "legacy" {
						continue
					}
					require.Equal(t, n, s.delivered, "%s: with 6 attempts at 20%% failure nothing else is lost", name)
				}
				// legacy always fails: each message takes every attempt,
				// one after the other, and ends in the dead letters.
				legacy := stats(rep, "legacy")
				require.Equal(t, 4, legacy.dead)
				require.Equal(t, 4*(tc.retry.attempts()-1), legacy.retries)
				require.GreaterOrEqual(t, legacy.blocked, 4*(tc.retry.span()+time.Duration(tc.retry.attempts())*demoDefaults.Latency))
				require.Len(t, rep.snap.letters, 4)
				for i, l := range rep.snap.letters {
					require.Equal(t, "legacy", l.Sub)
					require.EqualValues(t, i+1, l.Seq, "dead-lettered in order")
					require.ErrorContains(t, l.Err, "500")
				}
				require.Equal(t, "legacy", rep.blocker)
				// Retry delays hold up their own subscription only, even
				// with a global rate: no other message waited for one.
				for _, s := range rep.snap.subs {
					require.Less(t, s.maxWait, tc.retry.FastDelay, s.sub.Name)
				}
				// warehouse was down at first: it retried, kept its order,
				// and lost nothing.
				require.Positive(t, stats(rep, "warehouse").retries)
				require.Positive(t, stats(rep, "warehouse").blocked)
				// The handler panic was recovered, and the message retried
				// and delivered once.
				require.Equal(t, []msgID{{"audit", 3}}, rep.snap.panics)
				require.Contains(t, rep.boxes["audit"].requests, uint64(3))
				require.Equal(t, 1, countOf(rep.boxes["audit"].accepted, 3))

				// The receiver proves FIFO: one request at a time, in order...
				for _, s := range rep.snap.subs {
					if s.sub.FIFO {
						require.Equal(t, 1, rep.boxes[s.sub.Name].maxInFlight, s.sub.Name)
					}
				}
				// ...and the check is not vacuous: concurrent subscriptions,
				// whose retries go out beside later messages, fail it.
				require.NotEmpty(t, rep.boxes["analytics"].fifoViolation())
				require.Positive(t, rep.boxes["analytics"].reordered())
			})
		})
	}
}
