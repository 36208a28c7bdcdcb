package pacerotel_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
	"github.com/pacerkit/pacer/window"
)

// A call that the window's close cuts short is deferred: its batch runs
// again when the window opens, without using an attempt.
func TestWindowDefers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		w, err := window.Daily("00:00", "00:01", time.UTC)
		require.NoError(t, err)
		cfg := pacer.Config[string, int]{Window: &w}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		calls := 0
		r, err := pacer.New(cfg, tel.Handler(func(ctx context.Context, _ string, _ []int) error {
			calls++
			if calls == 1 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}))
		require.NoError(t, err)
		require.NoError(t, r.Add(context.Background(), "k", 1))
		run(t, r, 25*time.Hour)
		spans := s.ended()
		require.Len(t, spans, 2)
		require.Equal(t, "deferred", attrs(spans[0])["pacer.outcome"])
		require.Equal(t, "ok", attrs(spans[1])["pacer.outcome"])
		require.Equal(t, int64(1), attrs(spans[1])["pacer.attempt"], "the cut-short call used no attempt")
	})
}

// A call cut short by the end of Run's ctx is deferred too, and a
// permanent error with it still goes back to its key.
func TestRunEndDefers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		r, err := pacer.New(cfg, tel.Handler(func(ctx context.Context, _ string, _ []int) error {
			if pacer.Attempt(ctx) == 1 && len(s.ended()) == 0 {
				<-ctx.Done()
				return pacer.Permanent(ctx.Err())
			}
			return nil
		}))
		require.NoError(t, err)
		require.NoError(t, r.Add(context.Background(), "k", 1))
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		stop()
		require.ErrorIs(t, <-done, context.Canceled)
		require.NoError(t, r.Shutdown(context.Background()))
		spans := s.ended()
		require.Len(t, spans, 2)
		require.Equal(t, "deferred", attrs(spans[0])["pacer.outcome"])
		require.Equal(t, "ok", attrs(spans[1])["pacer.outcome"], "Shutdown handles the batch")
	})
}

func TestOutcomeNames(t *testing.T) {
	for o, want := range []string{"ok", "retry", "dropped", "held", "lease_lost", "deferred"} {
		require.Equal(t, want, pacerotel.Outcome(o).String())
	}
	require.Equal(t, "unknown", pacerotel.Outcome(99).String())
}

func TestConfigErrors(t *testing.T) {
	_, err := pacerotel.New(pacer.Config[string, int]{}, pacerotel.Config{BlockedKeys: -2})
	require.EqualError(t, err, "pacerotel: Config.BlockedKeys must be >= -1, got -2")
}
