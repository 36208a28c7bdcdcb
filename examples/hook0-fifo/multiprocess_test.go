package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/examples/internal/proctest"
)

// childArgs, in the environment, makes TestChildDispatcher run the
// program with these arguments (separated by newlines).
const childArgs = "HOOK0_FIFO_CHILD_ARGS"

// TestChildDispatcher is a dispatcher process of TestThreeDispatchers,
// which starts the test binary again with childArgs set; on its own it
// skips.
func TestChildDispatcher(t *testing.T) {
	args := os.Getenv(childArgs)
	if args == "" {
		t.Skip("a dispatcher process of TestThreeDispatchers")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	require.NoError(t, run(ctx, strings.Split(args, "\n"), os.Stdout))
	// serve delivers with the default transport: its idle connections
	// would fail the goroutine leak check of this process.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

// TestThreeDispatchers runs three dispatcher processes on one PostgreSQL
// schema, with a receiver that fails 20 % of requests and one endpoint
// that always fails, publishes events to them through the database, and
// kills one dispatcher with SIGKILL halfway. Every FIFO subscription's
// requests still never go back in sequence, at most the message in flight
// at the kill is accepted twice, the always failing subscription's
// messages are in the dead-letter table, and every other message arrives.
func TestThreeDispatchers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes")
	}
	conn := postgresConn(t)
	schema := freshSchema(t, conn)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	rc := newReceiver(receiverConfig{FailRate: 0.2, Seed: 3, Latency: 5 * time.Millisecond, Broken: map[string]bool{"legacy": true}})
	hooks := httptest.NewServer(rc)
	defer hooks.Close()
	subs := []subscription{
		{Name: "orders", URL: hooks.URL + "/hooks/orders", Types: []string{"order.*"}, FIFO: true},
		{Name: "audit", URL: hooks.URL + "/hooks/audit", Types: []string{"*"}, FIFO: true},
		{Name: "legacy", URL: hooks.URL + "/hooks/legacy", Types: []string{"customer.deleted"}, FIFO: true},
		{Name: "analytics", URL: hooks.URL + "/hooks/analytics", Types: []string{"*"}},
	}
	retry := schedule{Fast: 2, FastDelay: 10 * time.Millisecond, Slow: 1, SlowDelay: 50 * time.Millisecond}
	args := []string{"-postgres", postgresURL(), "-schema", schema, "-listen", "127.0.0.1:0", "-lease", "2s",
		"-fast", "2", "-fast-delay", "10ms", "-slow", "1", "-slow-delay", "50ms", "-timeout", "2s",
		"-fifo-workers", "2", "-workers", "4"}
	for _, s := range subs {
		mode := "concurrent"
		if s.FIFO {
			mode = "fifo"
		}
		args = append(args, "-sub", fmt.Sprintf("%s,%s,%s,%s", s.Name, s.URL, strings.Join(s.Types, "|"), mode))
	}

	// The publisher: a dispatcher of this process that only publishes.
	st, num, closeStore, err := openPostgres(ctx, postgresURL(), schema, 2)
	require.NoError(t, err)
	defer closeStore()
	pub, err := newDispatcher(dispatcherConfig{Subs: subs, Retry: retry, Store: st, Numbering: num})
	require.NoError(t, err)
	defer func() { _ = pub.shutdown(context.Background()) }()

	var procs []*exec.Cmd
	var outs []*proctest.Output
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildDispatcher$", "-test.count=1")
		cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(args, "\n"), "HOOK0_SECRET=")
		out := new(proctest.Output)
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		procs, outs = append(procs, cmd), append(outs, out)
	}
	// All three serve before the first event, so that the one killed has
	// work in flight.
	for _, out := range outs {
		for !strings.Contains(out.String(), "msg=listening") {
			select {
			case <-ctx.Done():
				require.FailNow(t, "a dispatcher did not start", "%s", out)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	defer func() {
		for _, p := range procs {
			if p.ProcessState == nil {
				_ = p.Process.Kill()
				_ = p.Wait()
			}
		}
	}()

	const events = 90
	published := map[string]int{}
	for i := range events {
		typ := demoTypes[i%len(demoTypes)]
		_, err := pub.publish(ctx, Event{ID: fmt.Sprintf("evt_%03d", i+1), Type: typ})
		require.NoError(t, err)
		for _, s := range subs {
			if s.matches(typ) {
				published[s.Name]++
			}
		}
		if i == events/2 {
			require.NoError(t, procs[0].Process.Signal(syscall.SIGKILL))
			_ = procs[0].Wait()
			t.Logf("killed a dispatcher after event %d; it had logged %d retries", i+1, strings.Count(outs[0].String(), "will retry"))
		}
	}

	// Wait until every message was accepted or is a dead letter. The work
	// is in other processes: this one can only look, from time to time.
	done := func() bool {
		boxes, _, _ := rc.snapshot()
		dead := deadBySub(t, ctx, pub)
		for _, s := range subs {
			acc := slices.Compact(slices.Sorted(slices.Values(boxes[s.Name].accepted)))
			if len(acc)+dead[s.Name] < published[s.Name] {
				return false
			}
		}
		return true
	}
	for !done() {
		select {
		case <-ctx.Done():
			boxes, _, _ := rc.snapshot()
			require.FailNow(t, "not every message arrived", "published %v, dead %v, accepted %v", published, deadBySub(t, context.Background(), pub), boxes)
		case <-time.After(50 * time.Millisecond):
		}
	}
	for i, p := range procs[1:] {
		require.NoError(t, p.Process.Signal(syscall.SIGTERM))
		require.NoError(t, p.Wait(), "a dispatcher that was not killed stops cleanly:\n%s", outs[i+1])
	}

	boxes, badSig, badReq := rc.snapshot()
	require.Zero(t, badSig+badReq)
	dead := deadBySub(t, ctx, pub)
	ids, err := pub.storedDead(ctx)
	require.NoError(t, err)
	short := 0
	for _, id := range ids {
		// Nothing was given up early, whichever process sent it, but for
		// an attempt that died with the killed process before its request
		// went out: the store counted it.
		sent := countOf(boxes[id.sub].requests, id.seq)
		require.GreaterOrEqual(t, sent, retry.attempts()-1, "%s #%d: dead before all its attempts", id.sub, id.seq)
		if sent < retry.attempts() {
			short++
		}
	}
	require.LessOrEqual(t, short, 2+4, "only messages in flight at the kill (one per worker) may have lost an attempt")
	for _, s := range subs {
		b := boxes[s.Name]
		repeats := len(b.accepted) - len(slices.Compact(slices.Clone(b.accepted)))
		t.Logf("%s: %d published, %d requests, %d accepted (%d twice), %d dead, at most %d in flight",
			s.Name, published[s.Name], len(b.requests), len(b.accepted), repeats, dead[s.Name], b.maxInFlight)
		if !s.FIFO {
			continue
		}
		require.Equal(t, 1, b.maxInFlight, s.Name)
		// No two processes held the subscription at once: its fences
		// never went back.
		require.NotContains(t, b.fences, uint64(0), "%s: every request has its fence", s.Name)
		require.Empty(t, b.fenceViolation(), s.Name)
		for i := 1; i < len(b.requests); i++ {
			require.GreaterOrEqual(t, b.requests[i], b.requests[i-1], "%s: request %d went back in sequence", s.Name, i)
		}
		require.LessOrEqual(t, repeats, 1, "%s: only the message in flight at the kill may be accepted twice", s.Name)
	}
	require.Equal(t, published["legacy"], dead["legacy"], "legacy's messages are all in the dead-letter table")
	require.Positive(t, dead["legacy"])
}

// deadBySub counts the dead letters in the store's table per subscription.
func deadBySub(t *testing.T, ctx context.Context, d *dispatcher) map[string]int {
	ids, err := d.storedDead(ctx)
	require.NoError(t, err)
	n := map[string]int{}
	for _, id := range ids {
		n[id.sub]++
	}
	return n
}
