//go:build linux

package redisstore_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestMultiProcessStoppedAfterClaim stops an instance, an OS process, with
// SIGSTOP right after its Claim leased a key and before the handler
// started, lets another instance run the key once the lease lapsed, then
// continues the stopped one: it runs no handler on the lapsed lease and
// ends nothing, the lease being the other's now.
func TestMultiProcessStoppedAfterClaim(t *testing.T) {
	const ttl = time.Second
	s, _, prefix := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := startFleet(t, ctx, childConfig{URL: serverURL(), Prefix: prefix, Name: "stopped", Workers: 1, MaxBatch: 1, LeaseTTL: ttl}, 1)
	stopped := f.pick(0)
	require.NoError(t, stopped.send("stop-after-claim"))
	// The child reads its commands on a goroutine of its own: k comes
	// once it will stop, or its Claim of k could come first.
	select {
	case <-stopped.armed:
	case <-time.After(30 * time.Second):
		t.Fatal("the instance did not take the command")
	}
	// The other instance adds k, before it runs: the stopped one may not
	// answer an add of its own, since a garbage collection in it waits
	// for its stopped thread.
	ran := make(chan uint64, 2)
	other, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "stopped", LeaseTTL: ttl},
		func(ctx context.Context, _ string, _ []int) error {
			f, _ := pacer.Fence(ctx)
			ran <- f
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, other.Add(ctx, "k", 1))
	var claimed string
	select {
	case claimed = <-stopped.claimed:
	case <-time.After(30 * time.Second):
		t.Fatal("the instance did not claim k")
	}
	fence, err := strconv.ParseUint(strings.Fields(claimed)[2], 10, 64)
	require.NoError(t, err)

	storetest.StartRunner(t, other)
	select {
	case f := <-ran:
		require.Greater(t, f, fence, "the other instance runs k under a new lease")
	case <-time.After(10 * ttl):
		t.Fatal("the other instance did not run k")
	}
	require.Eventually(t, func() bool {
		st, err := s.Stats(ctx, "stopped")
		return err == nil && st == store.Stats{}
	}, 10*time.Second, 10*time.Millisecond, "the other instance's Ack ended k")

	require.NoError(t, stopped.cmd.Process.Signal(syscall.SIGCONT))
	select {
	case <-stopped.lapsed:
	case <-time.After(10 * time.Second):
		log, _ := os.ReadFile(stopped.log)
		t.Fatalf("the continued instance did not leave its lapsed lease (fence %d); its event log:\n%s", fence, log)
	}
	f.stop()
	calls, drops := readCalls(t, stopped)
	require.Empty(t, calls, "the continued instance ran no handler")
	require.Empty(t, drops)
	st, err := s.Stats(ctx, "stopped")
	require.NoError(t, err)
	require.Equal(t, store.Stats{}, st)
	require.Empty(t, ran, "k ran once")
}
