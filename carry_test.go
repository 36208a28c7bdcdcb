package pacer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

type tagKey struct{}

// tagOf is a Config.Carry: the tag that Add's ctx carries, if any.
func tagOf(ctx context.Context) []byte {
	if tag, ok := ctx.Value(tagKey{}).(string); ok {
		return []byte(tag)
	}
	return nil
}

func tagged(tag string) context.Context {
	return context.WithValue(context.Background(), tagKey{}, tag)
}

// carriedCall is what a handler saw of its batch and its carried bytes.
type carriedCall struct {
	batch   []int
	carried []string // "-" for nil
}

func carriedStrings(ctx context.Context) []string {
	var out []string
	for _, c := range pacer.Carried(ctx) {
		if c == nil {
			out = append(out, "-")
		} else {
			out = append(out, string(c))
		}
	}
	return out
}

// The bytes of each Add reach the handler beside their value, in the
// batch's order, through a debounced burst, a retry and a rerun.
func TestCarryReachesHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls []carriedCall
		failed := false
		r, err := pacer.New(pacer.Config[string, int]{Debounce: time.Second, Carry: tagOf},
			func(ctx context.Context, _ string, batch []int) error {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, carriedCall{batch, carriedStrings(ctx)})
				if !failed {
					failed = true
					return errors.New("once")
				}
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, r.Add(tagged("a"), "k", 1))
		require.NoError(t, r.Add(context.Background(), "k", 2))
		require.NoError(t, r.Add(tagged("c"), "k", 3))
		done := make(chan error, 1)
		ctx, stop := context.WithCancel(context.Background())
		go func() { done <- r.Run(ctx) }()
		time.Sleep(1500 * time.Millisecond) // the burst closed, its call failed
		require.NoError(t, r.Add(tagged("d"), "k", 4))
		time.Sleep(time.Minute)
		stop()
		require.ErrorIs(t, <-done, context.Canceled)
		require.NoError(t, r.Shutdown(context.Background()))
		require.Equal(t, []carriedCall{
			{[]int{1, 2, 3}, []string{"a", "-", "c"}},
			{[]int{1, 2, 3}, []string{"a", "-", "c"}}, // the retry
			{[]int{4}, []string{"d"}},
		}, calls)
	})
}

func TestCarryStrict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls []carriedCall
		r, err := pacer.New(pacer.Config[string, int]{MaxBatch: 1, Carry: tagOf},
			func(ctx context.Context, _ string, batch []int) error {
				calls = append(calls, carriedCall{batch, carriedStrings(ctx)})
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, r.Add(tagged("x"), "k", 1))
		require.NoError(t, r.Add(tagged("y"), "k", 2))
		require.NoError(t, r.Shutdown(context.Background()))
		require.Equal(t, []carriedCall{{[]int{1}, []string{"x"}}, {[]int{2}, []string{"y"}}}, calls)
	})
}

// What a Runner with Carry gives up still reaches OnDrop as values.
func TestCarryDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dropped []int
		r, err := pacer.New(pacer.Config[string, int]{
			Debounce: time.Hour, DropPendingOnShutdown: true, Carry: tagOf,
			OnDrop: func(_ string, batch []int, err error) {
				require.ErrorIs(t, err, pacer.ErrClosed)
				dropped = append(dropped, batch...)
			},
		}, func(context.Context, string, []int) error { return nil })
		require.NoError(t, err)
		require.NoError(t, r.Add(tagged("a"), "k", 1))
		require.NoError(t, r.Add(tagged("b"), "k", 2))
		require.NoError(t, r.Shutdown(context.Background()))
		require.Equal(t, []int{1, 2}, dropped)
	})
}

func TestCarryOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		r, err := pacer.New(pacer.Config[string, int]{}, func(ctx context.Context, _ string, _ []int) error {
			calls++
			require.Nil(t, pacer.Carried(ctx))
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, r.Add(tagged("a"), "k", 1))
		require.NoError(t, r.Shutdown(context.Background()))
		require.Equal(t, 1, calls)
	})
	require.Nil(t, pacer.Carried(context.Background()))
}
