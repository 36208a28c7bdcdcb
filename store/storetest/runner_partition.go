package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/internal/frozenproxy"
	"github.com/pacerkit/pacer/store"
)

// partitionTTL is the LeaseTTL of the Runners of RunPartition.
const partitionTTL = 1500 * time.Millisecond

// Partition is what RunPartition needs from the engine.
type Partition struct {
	// Addr is the address of the engine's server, host:port, on TCP.
	Addr string
	// Direct is the engine, reaching the server at Addr.
	Direct store.Store
	// Open returns a store on the same data as Direct that reaches the
	// server at addr, a proxy's address, and is closed when t ends.
	// RunPartition calls it once.
	Open func(t *testing.T, addr string) store.Store
}

// RunPartition runs a Runner, A, on a store that p.Open returns, whose
// connections to the server go through a proxy, and freezes the proxy
// while A's handler runs, as a network partition would: every connection
// stays open, and silent. Then it runs a Runner B on p.Direct. It checks
// that A's handler ctx ends, with ErrLeaseLost, strictly before B's handler
// starts the key, and that B does start it: the two never run it side by
// side, and the key is not lost. Once B ran it, it closes the proxy, which
// ends A's calls that waited on a frozen connection, and A shuts down at
// the end of the test. Its Runners' queue is named t.Name().
func RunPartition(t *testing.T, p Partition) {
	t.Helper()
	proxy := frozenproxy.Start(t, p.Addr)
	a, b, q := p.Open(t, proxy.Addr()), p.Direct, t.Name()
	type bStart struct {
		at     time.Time
		aDone  bool  // whether A's handler ctx was done then
		aCause error // its cause
	}
	var (
		aCtx    context.Context
		aStart  = make(chan context.Context, 1)
		aEnd    = make(chan time.Time, 1)
		bStarts = make(chan bStart, 2)
	)
	cfg := pacer.Config[string, int]{Store: a, Name: q, LeaseTTL: partitionTTL,
		OnDrop: func(string, []int, error) { t.Error("OnDrop called") }}
	ra, err := pacer.New(cfg, func(ctx context.Context, _ string, _ []int) error {
		aStart <- ctx
		<-ctx.Done()
		aEnd <- time.Now()
		return ctx.Err()
	})
	require.NoError(t, err)
	StartRunner(t, ra)
	require.NoError(t, ra.Add(t.Context(), "k", 1))
	select {
	case aCtx = <-aStart:
	case <-time.After(10 * time.Second):
		t.Fatal("A did not start k")
	}
	started := time.Now()
	proxy.Freeze()

	cfg.Store = b
	rb, err := pacer.New(cfg, func(context.Context, string, []int) error {
		bStarts <- bStart{at: time.Now(), aDone: aCtx.Err() != nil, aCause: context.Cause(aCtx)}
		return nil
	})
	require.NoError(t, err)
	StartRunner(t, rb)
	var bs bStart
	select {
	case bs = <-bStarts:
	case <-time.After(10 * partitionTTL):
		t.Fatalf("B did not start k within %v of the freeze", 10*partitionTTL)
	}
	if !bs.aDone {
		select {
		case ended := <-aEnd:
			t.Fatalf("A and B ran k side by side for %v: since A's handler started k, B's handler started it at %v, A's ctx ended at %v, with %v",
				ended.Sub(bs.at).Round(time.Millisecond), bs.at.Sub(started).Round(time.Millisecond), ended.Sub(started).Round(time.Millisecond), context.Cause(aCtx))
		case <-time.After(30 * time.Second):
			t.Fatalf("A's handler ctx was not done when B's handler started k, nor 30 s later")
		}
	}
	require.ErrorIs(t, bs.aCause, pacer.ErrLeaseLost)
	ended := <-aEnd
	t.Logf("since A's handler started k: A's ctx ended at %v, B's handler started k at %v; A's ctx: %v",
		ended.Sub(started).Round(time.Millisecond), bs.at.Sub(started).Round(time.Millisecond), bs.aCause)

	proxy.Close()
	require.Eventually(t, func() bool {
		st, err := b.Stats(context.Background(), q)
		return err == nil && st == store.Stats{}
	}, 10*time.Second, 10*time.Millisecond, "B's Ack ended k, and nothing is left")
	select {
	case bs := <-bStarts:
		t.Fatalf("k ran again on B, %v after A started it", bs.at.Sub(started))
	default:
	}
}
