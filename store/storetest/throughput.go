package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// ServeThroughput is the body of a Process of an end-to-end throughput
// measurement: a Runner on s's queue q with 4 workers, MaxBatch maxBatch
// and a no-op handler (with AckInBackground if
// PACER_BENCH_ACK_IN_BACKGROUND is 1), which starts when "go" comes on
// standard input and stops when that closes, then prints how many values
// it handled. s must be connected already: the parent starts its clock
// once every process is ready.
func ServeThroughput[V any](t *testing.T, s store.Store, q string, maxBatch int) {
	var handled atomic.Int64
	background := os.Getenv("PACER_BENCH_ACK_IN_BACKGROUND") == "1"
	r, err := pacer.New(pacer.Config[string, V]{Store: s, Name: q, Workers: 4, MaxBatch: maxBatch, AckInBackground: background},
		func(_ context.Context, _ string, batch []V) error { handled.Add(int64(len(batch))); return nil })
	require.NoError(t, err)
	ctx := context.Background()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", in.Text())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(ctx))
	require.NoError(t, <-done)
	fmt.Printf("handled %d\n", handled.Load())
}
