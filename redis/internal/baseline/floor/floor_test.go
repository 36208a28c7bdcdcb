package floor_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/baseline/floor"
	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// layouts runs f for each Layout, on a queue of its own of a redis-server
// of the test's own.
func layouts(t *testing.T, f func(t *testing.T, c *redis.Client, queue string, layout floor.Layout)) {
	c := redistest.Dial(t, &redis.Options{Addr: redistest.StartServer(t).Addr()})
	for name, layout := range map[string]floor.Layout{"LeaseMember": floor.LeaseMember, "KeyHash": floor.KeyHash, "KeyHashLean": floor.KeyHashLean} {
		t.Run(name, func(t *testing.T) { f(t, c, t.Name(), layout) })
	}
}

func TestStepLeasesOneValueOfAKeyAtATimeInAddOrder(t *testing.T) {
	layouts(t, func(t *testing.T, c *redis.Client, queue string, layout floor.Layout) {
		ctx := context.Background()
		s, err := floor.New(ctx, c, queue, time.Minute, layout)
		require.NoError(t, err)
		for _, kv := range [][2]string{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}} {
			require.NoError(t, s.Add(ctx, kv[0], kv[1]))
		}
		got, err := s.Step(ctx, nil, 3)
		require.NoError(t, err)
		require.Len(t, got, 2, "a key is leased once at a time")
		a, b := got[0], got[1]
		require.Equal(t, [2]string{"a", "a1"}, [2]string{a.Key, a.Value})
		require.Equal(t, [2]string{"b", "b1"}, [2]string{b.Key, b.Value})
		got, err = s.Step(ctx, nil, 1)
		require.NoError(t, err)
		require.Empty(t, got, "both keys are leased")

		_, err = s.Step(ctx, &a, 0)
		require.NoError(t, err)
		_, err = s.Step(ctx, &a, 0)
		require.ErrorIs(t, err, floor.ErrLeaseLost, "a lease ends once")
		got, err = s.Step(ctx, nil, 1)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, [2]string{"a", "a2"}, [2]string{got[0].Key, got[0].Value}, "a's next value, once its first ended")
		require.Greater(t, got[0].Fence, b.Fence)
		_, err = s.Step(ctx, &a, 0)
		require.ErrorIs(t, err, floor.ErrLeaseLost, "a's first lease is over")

		for _, l := range []floor.Lease{got[0], b} {
			got, err := s.Step(ctx, &l, 1)
			require.NoError(t, err)
			require.Empty(t, got)
		}
		ready, err := s.Ready(ctx)
		require.NoError(t, err)
		leased, err := s.Leased(ctx)
		require.NoError(t, err)
		require.Zero(t, ready+leased)
	})
}

func TestALapsedLeaseIsLostAndItsValueLeasedAgain(t *testing.T) {
	layouts(t, func(t *testing.T, c *redis.Client, queue string, layout floor.Layout) {
		ctx := context.Background()
		// A lease of 1 µs has lapsed by the next call, a round trip later.
		s, err := floor.New(ctx, c, queue, time.Microsecond, layout)
		require.NoError(t, err)
		require.NoError(t, s.Add(ctx, "k", "v"))
		got, err := s.Step(ctx, nil, 1)
		require.NoError(t, err)
		require.Len(t, got, 1)
		lapsed := got[0]
		_, err = s.Step(ctx, &lapsed, 0)
		require.ErrorIs(t, err, floor.ErrLeaseLost)

		got, err = s.Step(ctx, nil, 1)
		require.NoError(t, err)
		require.Len(t, got, 1, "the key is taken back from its lapsed lease")
		require.Equal(t, "v", got[0].Value, "its value stayed")
		require.Greater(t, got[0].Fence, lapsed.Fence)
		_, err = s.Step(ctx, &lapsed, 0)
		require.ErrorIs(t, err, floor.ErrLeaseLost, "the lapsed lease is superseded")
	})
}
