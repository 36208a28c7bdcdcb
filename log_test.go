package pacer_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// levels is a slog.Handler that records the level of each message.
type levels struct {
	mu   sync.Mutex
	msgs map[string]slog.Level
}

func (h *levels) Enabled(context.Context, slog.Level) bool { return true }
func (h *levels) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *levels) WithGroup(string) slog.Handler            { return h }
func (h *levels) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs[r.Message] = r.Level
	return nil
}

func TestLogLevels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &levels{msgs: map[string]slog.Level{}}
		r, err := pacer.New(pacer.Config[string, int]{
			Logger: slog.New(h),
			Retry:  pacer.Backoff{Initial: time.Second, Attempts: 3},
		}, func(ctx context.Context, key string, _ []int) error {
			switch pacer.Attempt(ctx) {
			case 1:
				panic("bug")
			case 2:
				return errors.New("transient")
			}
			return pacer.Permanent(errors.New("bad"))
		})
		require.NoError(t, err)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		time.Sleep(time.Minute)
		stop()
		require.Equal(t, map[string]slog.Level{
			"pacer: value received":           slog.LevelDebug,
			"pacer: batch started":            slog.LevelDebug,
			"pacer: handler panicked":         slog.LevelError,
			"pacer: batch failed, will retry": slog.LevelWarn,
			"pacer: batch dropped":            slog.LevelWarn,
		}, h.msgs)
	})
}
