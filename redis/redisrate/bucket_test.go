package redisrate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

// fakeServer answers take with the delays it is given, in order, and
// records what the bucket asked. It stands in for Redis in the tests of
// the waiting logic, which run in synctest bubbles.
type fakeServer struct {
	mu       sync.Mutex
	delays   []time.Duration // the replies of take; < 0 refuses
	err      error           // the error of every call, when set
	takes    []int64         // the most of each take
	released []int64         // the tat of each release
	paused   []int64         // the microseconds of each pauseFor
}

func (f *fakeServer) take(_ context.Context, most int64) (int64, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.takes = append(f.takes, most)
	if f.err != nil {
		return 0, 0, f.err
	}
	d := f.delays[0]
	f.delays = f.delays[1:]
	if d < 0 {
		return -1, 0, nil
	}
	return int64(d / time.Microsecond), int64(1000 + len(f.takes)), nil
}

func (f *fakeServer) release(_ context.Context, tat int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, tat)
	return f.err
}

func (f *fakeServer) pauseFor(_ context.Context, us int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = append(f.paused, us)
	return f.err
}

func (f *fakeServer) calls() (takes, released, paused []int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.takes, f.released, f.paused
}

// newFakeBucket returns a bucket on f. Call it inside the bubble: its
// local clock starts there.
func newFakeBucket(t *testing.T, f *fakeServer, failOpen bool) *bucket {
	s, err := newShape("BucketConfig", 1, 1, "fake", "", failOpen)
	require.NoError(t, err)
	return &bucket{srv: f, s: s}
}

// goWait starts b.wait(ctx) and returns a channel with its result.
func goWait(ctx context.Context, b *bucket) <-chan error {
	done := make(chan error, 1)
	go func() { done <- b.wait(ctx) }()
	return done
}

// pending reports whether done has no result yet, once the bubble is idle.
func pending(done <-chan error) bool {
	synctest.Wait()
	return len(done) == 0
}

// TestWaitSleepsTheDelay: Wait makes one round trip and sleeps exactly
// the delay it returned.
func TestWaitSleepsTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{delays: []time.Duration{500 * time.Millisecond}}
		b := newFakeBucket(t, f, false)
		done := goWait(context.Background(), b)
		time.Sleep(500*time.Millisecond - time.Nanosecond)
		require.True(t, pending(done), "returned before the delay")
		time.Sleep(time.Nanosecond)
		require.False(t, pending(done), "still sleeping after the delay")
		require.NoError(t, <-done)
		takes, released, _ := f.calls()
		require.Equal(t, []int64{-1}, takes, "one take, with no deadline")
		require.Empty(t, released)
	})
}

// TestWaitDeadlineBudget: a Wait with a deadline lets the script take a
// turn no further than the deadline, and fails at once when it refuses.
func TestWaitDeadlineBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{delays: []time.Duration{-1, time.Second}}
		b := newFakeBucket(t, f, false)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		require.ErrorIs(t, b.wait(ctx), ratelimit.ErrWouldExceedDeadline)
		require.NoError(t, b.wait(ctx))
		takes, _, _ := f.calls()
		require.Equal(t, []int64{2e6, 2e6}, takes, "the budget in microseconds")
	})
}

// TestWaitCancelReleases: a Wait whose ctx ends while it sleeps returns
// ctx.Err() at once and gives back its turn.
func TestWaitCancelReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{delays: []time.Duration{10 * time.Second}}
		b := newFakeBucket(t, f, false)
		ctx, cancel := context.WithCancel(context.Background())
		done := goWait(ctx, b)
		time.Sleep(time.Second)
		cancel()
		require.False(t, pending(done), "still sleeping after cancel")
		require.ErrorIs(t, <-done, context.Canceled)
		_, released, _ := f.calls()
		require.Equal(t, []int64{1001}, released, "the turn's tat given back")
	})
}

// TestWaitPausedWhileSleeping: a pause set through the same value while a
// Wait sleeps holds it to the pause's end; then it takes a new turn.
func TestWaitPausedWhileSleeping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{delays: []time.Duration{500 * time.Millisecond, 0}}
		b := newFakeBucket(t, f, false)
		done := goWait(context.Background(), b)
		time.Sleep(100 * time.Millisecond)
		b.pauseFor(2 * time.Second)
		require.NoError(t, b.err())
		time.Sleep(2*time.Second - time.Nanosecond)
		require.True(t, pending(done), "returned during the pause")
		time.Sleep(time.Nanosecond)
		require.False(t, pending(done), "still sleeping after the pause")
		require.NoError(t, <-done)
		takes, _, paused := f.calls()
		require.Len(t, takes, 2, "a new turn after the pause")
		require.Equal(t, []int64{2e6}, paused)
	})
}

// TestPausedBeforeWait: a pause set through the value holds its Waits
// before they ask Redis, and refuses at once a Wait whose deadline comes
// first; Allow refuses during it without asking Redis.
func TestPausedBeforeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{delays: []time.Duration{0}}
		b := newFakeBucket(t, f, false)
		require.NoError(t, b.pause(context.Background(), time.Second))
		b.pauseFor(time.Millisecond) // shorter: must not shorten
		ok, err := b.allow(context.Background())
		require.NoError(t, err)
		require.False(t, ok)
		ctx, cancel := context.WithTimeout(context.Background(), 999*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, b.wait(ctx), ratelimit.ErrWouldExceedDeadline)
		takes, _, _ := f.calls()
		require.Empty(t, takes, "asked Redis during a pause it knew of")

		start := time.Now()
		require.NoError(t, b.wait(context.Background()))
		require.Equal(t, time.Second, time.Since(start))
		takes, _, _ = f.calls()
		require.Len(t, takes, 1)
	})
}

// TestServerErrors: Allow answers FailOpen with the error, Wait and Pause
// return it, PauseFor keeps it for err, and a pause still holds the value.
func TestServerErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := errors.New("connection refused")
		for _, open := range []bool{false, true} {
			f := &fakeServer{err: down}
			b := newFakeBucket(t, f, open)
			ok, err := b.allow(context.Background())
			require.ErrorIs(t, err, down)
			require.EqualError(t, err, `redisrate: Allow on "fake": connection refused`)
			require.Equal(t, open, ok)
			require.EqualError(t, b.wait(context.Background()), `redisrate: Wait on "fake": connection refused`)

			b.pauseFor(time.Second)
			require.EqualError(t, b.err(), `redisrate: Pause on "fake": connection refused`)
			ok, err = b.allow(context.Background())
			require.NoError(t, err)
			require.False(t, ok, "a pause Redis did not hear of still holds this value")
			time.Sleep(time.Second)
			f.mu.Lock()
			f.err = nil
			f.mu.Unlock()
			b.pauseFor(time.Second)
			require.NoError(t, b.err(), "Err is the last PauseFor's")
		}
	})
}
