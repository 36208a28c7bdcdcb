package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// keyInfo returns what key of queue q of m is doing.
func keyInfo(t *testing.T, m *store.Memory, key string) store.KeyInfo {
	t.Helper()
	info, ok, err := m.Key(t.Context(), "q", key)
	require.NoError(t, err)
	require.True(t, ok, "key %q holds values", key)
	return info
}

// Every lease a Runner on a Store takes carries its Config.Instance, the
// leases its workers claim and those a worker claims with the end of its
// batch alike; by default, "hostname:pid".
func TestInstanceHoldsLeases(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	for instance, want := range map[string]string{"node-7": "node-7", "": fmt.Sprintf("%s:%d", host, os.Getpid())} {
		t.Run(want, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := store.NewMemory(store.MemoryConfig{})
				running := make(chan int, 2)
				next := make(chan struct{}, 2)
				rc := newRecorder(func(_ context.Context, _ string, batch []int) error {
					running <- batch[0]
					<-next
					return nil
				})
				r := newRunner(t, pacer.Config[string, int]{Store: m, Name: "q", MaxBatch: 1, Instance: instance}, rc)
				stop := start(t, r)
				defer stop()
				defer func() { next <- struct{}{}; next <- struct{}{} }() // whatever failed
				require.NoError(t, r.Add(t.Context(), "k", 1))
				require.NoError(t, r.Add(t.Context(), "k", 2))
				require.Equal(t, 1, <-running)
				info := keyInfo(t, m, "k")
				require.Equal(t, store.Leased, info.State)
				require.Equal(t, want, info.Holder, "a lease its worker claimed")
				next <- struct{}{}
				require.Equal(t, 2, <-running) // claimed by the Ack of 1 (store.FinishClaimer)
				info = keyInfo(t, m, "k")
				require.Equal(t, store.Leased, info.State)
				require.Equal(t, want, info.Holder, "a lease claimed with the end of a batch")
			})
		})
	}
}

// A Runner on a Store leaves the handler's error with the batch it
// retries and with the key it holds, for an operator to read, cut to its
// first KiB; a dropped batch's dead letter keeps it whole.
func TestHandlerErrorKeptWithKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		m := store.NewMemory(store.MemoryConfig{})
		long := "failed: " + strings.Repeat("é", 2000)
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			switch key {
			case "long":
				return errors.New(long)
			case "dropped":
				return pacer.Permanent(errors.New(long))
			}
			return fmt.Errorf("boom %d", pacer.Attempt(ctx))
		})
		r := newRunner(t, pacer.Config[string, int]{Store: m, Name: "q",
			Retry: pacer.Backoff{Initial: time.Minute, Attempts: 2}, Exhausted: pacer.ExhaustedHold}, rc)
		stop := start(t, r)
		defer stop()
		require.NoError(t, r.Add(ctx, "k", 1))
		require.NoError(t, r.Add(ctx, "long", 1))
		require.NoError(t, r.Add(ctx, "dropped", 1))
		synctest.Wait()

		info := keyInfo(t, m, "k")
		require.Equal(t, store.Retrying, info.State)
		require.Equal(t, 1, info.Attempt)
		require.Equal(t, "boom 1", info.Err)
		info = keyInfo(t, m, "long")
		require.Equal(t, store.Retrying, info.State)
		require.LessOrEqual(t, len(info.Err), 1024, "the error of a retry, cut to a KiB")
		require.Greater(t, len(info.Err), 1024-utf8.UTFMax, "cut at the rune that passes a KiB")
		require.True(t, utf8.ValidString(info.Err), "cut between runes")
		require.True(t, strings.HasSuffix(info.Err, "…"))
		require.True(t, strings.HasPrefix(long, strings.TrimSuffix(info.Err, "…")))
		dead, err := r.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		require.Equal(t, "permanent: "+long, dead[0].Err, "a dead letter keeps the error whole")

		time.Sleep(time.Minute)
		synctest.Wait()
		info = keyInfo(t, m, "k")
		require.Equal(t, store.Held, info.State)
		require.Equal(t, 2, info.Attempt)
		require.Equal(t, "boom 2", info.Err, "the error of the hold")
		info = keyInfo(t, m, "long")
		require.Equal(t, store.Held, info.State)
		require.LessOrEqual(t, len(info.Err), 1024, "the error of a hold, cut to a KiB")
		require.True(t, strings.HasSuffix(info.Err, "…"))
	})
}
