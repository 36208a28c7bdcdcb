package runnertest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// MaxValues runs two pacer Runners with Config.MaxValues on s1 and s2,
// which hold the same data (they may be one Store), and checks that their
// Adds together stop at the bound, refused on either instance with
// ErrFull, which wraps store.ErrFull and counts in Stats.Refused; and that
// the values handled make room again.
func MaxValues(t *testing.T, s1, s2 store.Store) {
	ctx := t.Context()
	handled := make(chan int, 4)
	h := func(_ context.Context, _ string, batch []int) error {
		for _, v := range batch {
			handled <- v
		}
		return nil
	}
	cfg := pacer.Config[string, int]{Store: s1, Name: "full", MaxValues: 3, MaxBatch: 1}
	r1, err := pacer.New(cfg, h)
	require.NoError(t, err)
	cfg.Store = s2
	r2, err := pacer.New(cfg, h)
	require.NoError(t, err)

	require.NoError(t, r1.Add(ctx, "a", 1))
	require.NoError(t, r2.Add(ctx, "a", 2))
	require.NoError(t, r1.Add(ctx, "b", 3))
	err = r2.Add(ctx, "c", 4)
	require.ErrorIs(t, err, pacer.ErrFull, "the queue holds 3, added by both instances")
	require.ErrorIs(t, err, store.ErrFull)
	require.ErrorIs(t, r1.Add(ctx, "a", 4), pacer.ErrFull)
	st, err := r1.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, st.Values)
	require.Equal(t, uint64(2), st.Received)
	require.Equal(t, uint64(1), st.Refused)

	Start(t, r1)
	for range 3 {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("the values accepted were not handled")
		}
	}
	require.Eventually(t, func() bool { return r2.Add(ctx, "c", 4) == nil },
		10*time.Second, time.Millisecond, "room once the values were handled")
	select {
	case v := <-handled:
		require.Equal(t, 4, v)
	case <-time.After(10 * time.Second):
		t.Fatal("the value added once there was room was not handled")
	}
	require.NoError(t, r2.Shutdown(ctx))
}

// MaxValuesAcrossProcesses starts procs Children (see StartChild) that run
// test with the environment variable env set, each of which calls AddUpTo
// and adds up to bound values to queue q of the Store at where (a prefix,
// a schema: what AddUpTo's open takes), which s is too; it lets them add
// at once, and checks that the values they stored together are bound
// exactly, as s counts them: the engine checked one bound for all of them,
// atomically with each Add.
func MaxValuesAcrossProcesses(t *testing.T, s store.Store, where, q string, bound, procs int, test, env string) {
	var children []*Child
	for range procs {
		children = append(children, StartChild(t, test, env, where, q, strconv.Itoa(bound)))
	}
	for _, c := range children {
		c.Go(t)
	}
	stored := 0
	for _, c := range children {
		n, _ := c.Stop(t)
		stored += n
	}
	require.Equal(t, bound, stored, "values the processes' Adds stored")
	st, err := s.Stats(t.Context(), q)
	require.NoError(t, err)
	require.Equal(t, bound, st.Values, "values in the store")
}

// AddUpTo is the body of a Child of MaxValuesAcrossProcesses, started with
// env: a pacer Runner with Config.MaxValues bound on queue q of the Store
// that open returns for where, which it does not run. Once "go" comes on
// standard input it adds bound values, one at a time, to a few keys that
// the other processes add to as well; Add may refuse them with ErrFull,
// and with no other error. Once standard input closes, it prints how many
// values Add accepted, as "handled N" (see Child.Stop).
func AddUpTo(t *testing.T, env string, open func(where string) store.Store) {
	f := ChildArgs(t, env)
	q := f[1]
	bound, err := strconv.Atoi(f[2])
	require.NoError(t, err)
	s := open(f[0])
	ctx := context.Background()
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: q, MaxValues: bound},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", in.Text())
	accepted := 0
	for i := range bound {
		err := r.Add(ctx, fmt.Sprint(i%5), i)
		if err != nil {
			require.ErrorIs(t, err, pacer.ErrFull)
			continue
		}
		accepted++
	}
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(ctx))
	fmt.Printf("handled %d\n", accepted)
}
