package callctx

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type limiter struct{ n int }

// unequal has a slice, like ratelimit.All's value: == on it panics.
type unequal struct{ _ []int }

// wrapper is comparable as a type, whatever it holds.
type wrapper struct{ l any }

func TestSame(t *testing.T) {
	a, b := &limiter{}, &limiter{}
	for _, tc := range []struct {
		a, b any
		want bool
	}{
		{a, a, true},
		{a, b, false},
		{limiter{1}, limiter{1}, true},
		{limiter{1}, limiter{2}, false},
		{unequal{}, unequal{}, false},
		{a, unequal{}, false},
		{unequal{}, a, false},
		{wrapper{a}, wrapper{a}, true},
		{wrapper{a}, wrapper{unequal{}}, false},
		{wrapper{unequal{}}, wrapper{a}, false},
		{wrapper{unequal{}}, wrapper{unequal{}}, false},
	} {
		require.Equal(t, tc.want, same(tc.a, tc.b), "%#v == %#v", tc.a, tc.b)
	}
}

func TestTakePaidOnce(t *testing.T) {
	l := &limiter{}
	c := &Call{Context: context.Background(), Paid: l}
	require.False(t, c.TakePaid(&limiter{}))
	require.False(t, c.TakePaid(unequal{}))
	require.True(t, c.TakePaid(l))
	require.False(t, c.TakePaid(l))

	require.False(t, (&Call{Context: context.Background()}).TakePaid(l), "nothing paid")
	require.False(t, (&Call{Context: context.Background(), Paid: unequal{}}).TakePaid(unequal{}))
	var none *Call
	require.False(t, none.TakePaid(l))
}

type otherKey struct{}

func TestFromAndWaits(t *testing.T) {
	require.Nil(t, From(context.Background()))
	var waited atomic.Int64
	parent, cancel := context.WithCancel(context.Background())
	c := &Call{Context: parent, Attempt: 3, Waited: &waited}
	child, stop := context.WithTimeout(context.WithValue(c, otherKey{}, 1), time.Hour)
	defer stop()
	require.Same(t, c, From(child))
	require.True(t, From(child).Counting())
	From(child).AddWait(time.Second)
	require.Equal(t, int64(time.Second), waited.Load())
	var none *Call
	require.False(t, none.Counting())
	none.AddWait(time.Second)

	cancel()
	<-child.Done()
	require.ErrorIs(t, child.Err(), context.Canceled)
}

func TestCallSize(t *testing.T) {
	require.Equal(t, uintptr(48), unsafe.Sizeof(Call{}))
	require.Equal(t, int32(math.MaxInt32), Attempt32(math.MaxInt64))
	require.Equal(t, int32(7), Attempt32(7))
}

// A Fenced carries its fence to the contexts under it, passes every other
// key to its parent, and is cancelled with it: the cause reaches a child.
func TestFenced(t *testing.T) {
	type other struct{}
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), other{}, "v"))
	f := &Fenced{Context: parent, Fence: 42}
	child, stop := context.WithCancel(f)
	defer stop()
	fence, ok := Fence(child)
	require.True(t, ok)
	require.Equal(t, uint64(42), fence)
	require.Equal(t, "v", child.Value(other{}))
	_, ok = Fence(parent)
	require.False(t, ok)

	lost := errors.New("lost")
	cancel(lost)
	<-child.Done()
	require.ErrorIs(t, context.Cause(child), lost)
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { sink = WithFence(parent, 1000) }), "WithFence allocates its node alone")
}

var sink context.Context
