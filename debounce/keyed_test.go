package debounce

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fired is one call of fire, with times relative to the start of the test.
type fired struct {
	At          time.Duration
	Key         string
	Values      []int
	First, Last time.Duration
	Count       int
}

// recorder is a fire function that records its calls.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	got   []fired
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) fire(key string, b Burst[int]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fired{
		At: time.Since(r.start), Key: key, Values: b.Values,
		First: b.First.Sub(r.start), Last: b.Last.Sub(r.start), Count: b.Count,
	})
}

// take returns and forgets the calls so far, once the loop is idle.
func (r *recorder) take() []fired {
	synctest.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

func newKeyed(t *testing.T, cfg Config, r *recorder) *Keyed[string, int] {
	t.Helper()
	k, err := New(cfg, r.fire)
	require.NoError(t, err)
	return k
}

func closeKeyed(t *testing.T, k *Keyed[string, int]) {
	t.Helper()
	require.NoError(t, k.Close())
}

const ms = time.Millisecond

func TestBurstFiresOnceWithAllValuesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		for i := range 10 {
			require.NoError(t, k.Add("a", i))
			time.Sleep(300 * ms)
		}
		require.Empty(t, r.take())
		require.Equal(t, 1, k.Pending())
		time.Sleep(10 * time.Second)
		require.Equal(t, []fired{{
			At: 3700 * ms, Key: "a", Values: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
			First: 0, Last: 2700 * ms, Count: 10,
		}}, r.take())
		require.Equal(t, 0, k.Pending())
	})
}

// TestMaxWaitPreventsStarvation adds every Wait/2 for 10 s: without
// MaxWait nothing would fire until the adds stop.
func TestMaxWaitPreventsStarvation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, MaxWait: 3100 * ms}, r)
		defer closeKeyed(t, k)
		time.Sleep(250 * ms)
		for i := range 20 { // at 0.25 s, 0.75 s, ..., 9.75 s
			require.NoError(t, k.Add("a", i))
			time.Sleep(500 * ms)
		}
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{
			{At: 3350 * ms, Key: "a", Values: []int{0, 1, 2, 3, 4, 5, 6}, First: 250 * ms, Last: 3250 * ms, Count: 7},
			{At: 6850 * ms, Key: "a", Values: []int{7, 8, 9, 10, 11, 12, 13}, First: 3750 * ms, Last: 6750 * ms, Count: 7},
			{At: 10350 * ms, Key: "a", Values: []int{14, 15, 16, 17, 18, 19}, First: 7250 * ms, Last: 9750 * ms, Count: 6},
		}, r.take())
	})
}

func TestMaxItemsFiresAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, MaxItems: 3}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("a", 2))
		require.Empty(t, r.take())
		time.Sleep(100 * ms)
		require.NoError(t, k.Add("a", 3))
		require.Equal(t, []fired{{At: 100 * ms, Key: "a", Values: []int{1, 2, 3}, First: 0, Last: 100 * ms, Count: 3}}, r.take())
		require.Equal(t, 0, k.Pending())

		require.NoError(t, k.Add("a", 4))
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{{At: 1100 * ms, Key: "a", Values: []int{4}, First: 100 * ms, Last: 100 * ms, Count: 1}}, r.take())
	})
}

func TestLeadingFiresFirstValueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, Leading: true}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.Equal(t, []fired{{At: 0, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
		time.Sleep(500 * ms)
		require.NoError(t, k.Add("a", 2))
		time.Sleep(300 * ms)
		require.NoError(t, k.Add("a", 3))
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{{At: 1800 * ms, Key: "a", Values: []int{2, 3}, First: 0, Last: 800 * ms, Count: 3}}, r.take())
	})
}

func TestLeadingLoneValueFiresOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, Leading: true}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.Equal(t, 1, k.Pending())
		time.Sleep(10 * time.Second)
		require.Equal(t, []fired{{At: 0, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
		require.Equal(t, 0, k.Pending())

		// Quiet again: the next value leads a new burst.
		require.NoError(t, k.Add("a", 2))
		require.Equal(t, []fired{{At: 10 * time.Second, Key: "a", Values: []int{2}, First: 10 * time.Second, Last: 10 * time.Second, Count: 1}}, r.take())
	})
}

func TestKeysAreIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		time.Sleep(600 * ms)
		require.NoError(t, k.Add("b", 2))
		time.Sleep(600 * ms) // a fired at 1 s; b is still waiting
		require.Equal(t, []fired{{At: time.Second, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
		require.NoError(t, k.Add("a", 3))
		require.Equal(t, 2, k.Pending())
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{
			{At: 1600 * ms, Key: "b", Values: []int{2}, First: 600 * ms, Last: 600 * ms, Count: 1},
			{At: 2200 * ms, Key: "a", Values: []int{3}, First: 1200 * ms, Last: 1200 * ms, Count: 1},
		}, r.take())
	})
}

// TestDeadlineOrder checks that bursts fire by deadline, not by start, and
// that equal deadlines fire in the order the bursts started, also when one
// of them was rescheduled on the way.
func TestDeadlineOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		for _, key := range []string{"z", "x", "y", "late", "tied"} {
			require.NoError(t, k.Add(key, 0))
		}
		time.Sleep(500 * ms)
		require.NoError(t, k.Add("late", 1))
		require.NoError(t, k.Add("new", 1))
		require.NoError(t, k.Add("tied", 1))
		time.Sleep(5 * time.Second)
		var order []string
		for _, f := range r.take() {
			order = append(order, f.Key)
		}
		// late, new and tied are all due at 1.5 s; late and tied started
		// first, though their heap items were rescheduled after new's.
		require.Equal(t, []string{"z", "x", "y", "late", "tied", "new"}, order)
	})
}

func TestFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.False(t, k.Flush("a"))
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("b", 2))
		time.Sleep(200 * ms)
		require.True(t, k.Flush("a"))
		require.False(t, k.Flush("a"))
		require.Equal(t, 1, k.Pending())
		require.Equal(t, []fired{{At: 200 * ms, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
		require.NoError(t, k.Add("a", 3)) // a new burst, with its own deadline
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{
			{At: time.Second, Key: "b", Values: []int{2}, First: 0, Last: 0, Count: 1},
			{At: 1200 * ms, Key: "a", Values: []int{3}, First: 200 * ms, Last: 200 * ms, Count: 1},
		}, r.take())
	})
}

func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.False(t, k.Cancel("a"))
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("b", 2))
		require.True(t, k.Cancel("a"))
		require.False(t, k.Cancel("a"))
		require.Equal(t, 1, k.Pending())
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{{At: time.Second, Key: "b", Values: []int{2}, First: 0, Last: 0, Count: 1}}, r.take())
		require.Equal(t, 0, k.Pending())
	})
}

func TestShutdownFiresEverythingInDeadlineOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		require.NoError(t, k.Add("b", 1))
		time.Sleep(100 * ms)
		require.NoError(t, k.Add("a", 2))
		time.Sleep(100 * ms)
		require.NoError(t, k.Add("b", 3))
		require.NoError(t, k.Shutdown(context.Background()))
		// Shutdown has returned, so the fires are done: no synctest.Wait needed.
		r.mu.Lock()
		got := r.got
		r.mu.Unlock()
		require.Equal(t, []fired{
			{At: 200 * ms, Key: "a", Values: []int{2}, First: 100 * ms, Last: 100 * ms, Count: 1},
			{At: 200 * ms, Key: "b", Values: []int{1, 3}, First: 0, Last: 200 * ms, Count: 2},
		}, got)
		require.ErrorIs(t, k.Add("a", 4), ErrClosed)
		require.False(t, k.Flush("a"))
		require.False(t, k.Cancel("a"))
		require.Equal(t, 0, k.Pending())
		require.NoError(t, k.Close())
	})
}

func TestCloseDiscards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("b", 2))
		require.True(t, k.Flush("b")) // handed over: fires even so
		require.NoError(t, k.Close())
		require.ErrorIs(t, k.Add("a", 3), ErrClosed)
		require.Equal(t, 0, k.Pending())
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{{At: 0, Key: "b", Values: []int{2}, First: 0, Last: 0, Count: 1}}, r.take())
		require.NoError(t, k.Shutdown(context.Background()))
	})
}

// TestShutdownGivesUpWithContext blocks fire, so Shutdown cannot finish in
// time; a later Shutdown waits again, and a later Close does not discard
// the burst Shutdown handed over.
func TestShutdownGivesUpWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var got []string
		k, err := New(Config{Wait: time.Second}, func(key string, _ Burst[int]) {
			got = append(got, key)
			if key == "a" {
				<-release
			}
		})
		require.NoError(t, err)
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("b", 2))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.ErrorIs(t, k.Shutdown(ctx), context.DeadlineExceeded)
		require.ErrorIs(t, k.Add("a", 3), ErrClosed)
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.ErrorIs(t, k.Shutdown(ctx), context.DeadlineExceeded)
		close(release)
		require.NoError(t, k.Close())
		require.Equal(t, []string{"a", "b"}, got)
	})
}

// TestFirePanicCrashes: a panic in fire is not recovered. Like a panic in
// time.AfterFunc's f, it ends the process, here a copy of the test binary,
// with the panic on stderr.
func TestFirePanicCrashes(t *testing.T) {
	if os.Getenv("DEBOUNCE_FIRE_PANIC") == "1" {
		k, err := New(Config{Wait: time.Hour}, func(string, Burst[int]) { panic("boom in fire") })
		require.NoError(t, err)
		require.NoError(t, k.Add("a", 1))
		// Shutdown fires the burst and waits for it: it returns only if the
		// panic was swallowed, and the process then exits 0.
		require.NoError(t, k.Shutdown(context.Background()))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFirePanicCrashes$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DEBOUNCE_FIRE_PANIC=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the process survived a panic in fire")
	require.NotZero(t, exit.ExitCode())
	require.Contains(t, stderr.String(), "panic: boom in fire")
}

// TestFireMayAdd checks that fire can feed the debouncer again.
func TestFireMayAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		var k *Keyed[string, int]
		k, err := New(Config{Wait: time.Second}, func(key string, b Burst[int]) {
			r.fire(key, b)
			if v := b.Values[0]; v < 3 {
				assert.NoError(t, k.Add(key, v+1)) // on the loop: no FailNow
				assert.True(t, k.Flush(key))
			}
		})
		require.NoError(t, err)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 0))
		time.Sleep(5 * time.Second)
		var vals []int
		for _, f := range r.take() {
			require.Equal(t, time.Second, f.At)
			vals = append(vals, f.Values...)
		}
		require.Equal(t, []int{0, 1, 2, 3}, vals)
	})
}

// TestMockClock drives the debouncer with a clock.Mock instead of synctest.
// The loop sees the mock's time only when it gets to run, so the test keeps
// nudging the clock until the burst arrives; what it checks does not depend
// on when that is.
func TestMockClock(t *testing.T) {
	mock := clock.NewMock()
	got := make(chan Burst[int], 1)
	k, err := New(Config{Wait: time.Second, Clock: mock}, func(_ string, b Burst[int]) { got <- b })
	require.NoError(t, err)
	defer func() { require.NoError(t, k.Close()) }()
	start := mock.Now()
	require.NoError(t, k.Add("a", 1))
	mock.Add(500 * ms)
	require.NoError(t, k.Add("a", 2))
	require.Equal(t, 1, k.Pending())
	for range 1000 { // a bound against hanging, not a timing check
		mock.Add(100 * ms)
		select {
		case b := <-got:
			require.Equal(t, []int{1, 2}, b.Values)
			require.Equal(t, start.UnixNano(), b.First.UnixNano())
			require.Equal(t, start.Add(500*ms).UnixNano(), b.Last.UnixNano())
			require.Equal(t, 0, k.Pending())
			return
		case <-time.After(10 * ms):
		}
	}
	t.Fatal("no fire")
}

func TestNewValidates(t *testing.T) {
	noop := func(string, Burst[int]) {}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "debounce: Config.Wait must be > 0, got 0s"},
		{Config{Wait: -time.Second}, "debounce: Config.Wait must be > 0, got -1s"},
		{Config{Wait: time.Second, MaxWait: time.Millisecond}, "debounce: Config.MaxWait must be 0 or >= Config.Wait (1s), got 1ms"},
		{Config{Wait: time.Second, MaxItems: -1}, "debounce: Config.MaxItems must be >= 0, got -1"},
	} {
		k, err := New(tc.cfg, noop)
		require.EqualError(t, err, tc.want)
		require.Nil(t, k)
	}
	_, err := New[string, int](Config{Wait: time.Second}, nil)
	require.EqualError(t, err, "debounce: fire must not be nil")

	k, err := New(Config{Wait: time.Second, MaxWait: time.Second}, noop)
	require.NoError(t, err)
	require.NoError(t, k.Close())
}

// TestAddAfterDeadlineStartsNewBurst holds the loop up in fire so that a
// burst is overdue when the next Add comes: that Add opens a new burst
// instead of extending the overdue one.
func TestAddAfterDeadlineStartsNewBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		release := make(chan struct{})
		k, err := New(Config{Wait: time.Second}, func(key string, b Burst[int]) {
			r.fire(key, b)
			if key == "block" {
				<-release
			}
		})
		require.NoError(t, err)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("block", 0))
		time.Sleep(500 * ms)
		require.NoError(t, k.Add("a", 1))
		time.Sleep(1100 * ms) // a was due at 1.5 s; the loop is stuck since 1 s
		require.NoError(t, k.Add("a", 2))
		close(release)
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{
			{At: time.Second, Key: "block", Values: []int{0}, First: 0, Last: 0, Count: 1},
			{At: 1600 * ms, Key: "a", Values: []int{1}, First: 500 * ms, Last: 500 * ms, Count: 1},
			{At: 2600 * ms, Key: "a", Values: []int{2}, First: 1600 * ms, Last: 1600 * ms, Count: 1},
		}, r.take())
	})
}

// TestCloseFiresOverdue: a burst whose deadline has passed fires even if
// Close discards the rest, however late the loop is.
func TestCloseFiresOverdue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		release := make(chan struct{})
		k, err := New(Config{Wait: time.Second}, func(key string, b Burst[int]) {
			r.fire(key, b)
			if key == "block" {
				<-release
			}
		})
		require.NoError(t, err)
		require.NoError(t, k.Add("block", 0))
		time.Sleep(500 * ms)
		require.NoError(t, k.Add("overdue", 1))
		time.Sleep(1100 * ms) // overdue since 1.5 s; the loop is stuck since 1 s
		require.NoError(t, k.Add("early", 2))
		closed := make(chan error)
		go func() { closed <- k.Close() }()
		synctest.Wait()
		close(release)
		require.NoError(t, <-closed)
		require.Equal(t, []fired{
			{At: time.Second, Key: "block", Values: []int{0}, First: 0, Last: 0, Count: 1},
			{At: 1600 * ms, Key: "overdue", Values: []int{1}, First: 500 * ms, Last: 500 * ms, Count: 1},
		}, r.take())
	})
}

// TestIdleKeysHoldNothing checks that once every burst has fired or been
// cancelled and its deadline has passed, no per-key state is left.
func TestIdleKeysHoldNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := New(Config{Wait: time.Second}, func(int, Burst[int]) {})
		require.NoError(t, err)
		defer func() { require.NoError(t, k.Close()) }()
		for i := range 5000 {
			require.NoError(t, k.Add(i, i))
			require.NoError(t, k.Add(i, i)) // a second value
		}
		time.Sleep(500 * ms)
		for i := range 2000 {
			require.NoError(t, k.Add(i, i)) // rescheduled: moves to the heap
		}
		for i := 5000; i < 6000; i++ {
			require.NoError(t, k.AddWait(i, i, 2*time.Second)) // a quiet period of its own
		}
		for i := 4000; i < 5000; i++ {
			require.True(t, k.Cancel(i))
		}
		synctest.Wait()
		k.mu.Lock()
		require.Equal(t, 6000, len(k.entries)) // cancelled ones wait for their deadline
		require.Equal(t, 1000, len(k.ext))
		k.mu.Unlock()
		require.Equal(t, 5000, k.Pending())

		time.Sleep(time.Minute)
		synctest.Wait()
		k.mu.Lock()
		defer k.mu.Unlock()
		require.Empty(t, k.entries)
		require.Zero(t, k.peak, "the map was not replaced")
		require.Zero(t, k.fifo.len())
		require.Nil(t, k.fifo.items)
		require.Zero(t, k.heap.Len())
		require.Empty(t, k.ready)
		require.Zero(t, k.open)
		require.Nil(t, k.ext)
	})
}

// TestFlushAndCancelAfterDeadline: a burst whose deadline has passed is
// over even if the loop has not fired it yet, so Flush and Cancel find no
// open burst: it fires in its place in deadline order, not at the Flush,
// and Cancel does not discard it.
func TestFlushAndCancelAfterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		release := make(chan struct{})
		k, err := New(Config{Wait: time.Second}, func(key string, b Burst[int]) {
			r.fire(key, b)
			if key == "block" {
				<-release
			}
		})
		require.NoError(t, err)
		defer closeKeyed(t, k)
		var unblock sync.Once
		defer unblock.Do(func() { close(release) })
		require.NoError(t, k.Add("block", 0))
		time.Sleep(100 * ms)
		require.NoError(t, k.Add("flushed", 1))
		time.Sleep(100 * ms)
		require.NoError(t, k.Add("later", 2))
		time.Sleep(100 * ms)
		require.NoError(t, k.Add("cancelled", 3))
		time.Sleep(1100 * ms) // all due by 1.3 s; the loop is stuck since 1 s
		require.False(t, k.Flush("flushed"))
		require.False(t, k.Cancel("cancelled"))
		unblock.Do(func() { close(release) })
		time.Sleep(5 * time.Second)
		require.Equal(t, []fired{
			{At: time.Second, Key: "block", Values: []int{0}, First: 0, Last: 0, Count: 1},
			{At: 1400 * ms, Key: "flushed", Values: []int{1}, First: 100 * ms, Last: 100 * ms, Count: 1},
			{At: 1400 * ms, Key: "later", Values: []int{2}, First: 200 * ms, Last: 200 * ms, Count: 1},
			{At: 1400 * ms, Key: "cancelled", Values: []int{3}, First: 300 * ms, Last: 300 * ms, Count: 1},
		}, r.take())
		require.Zero(t, k.Pending())
	})
}

// TestMockClockLateLoop: on a mock clock, a burst that came due while fire
// was running fires as soon as fire returns; it does not wait for the
// clock to move again.
func TestMockClockLateLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		entered, release := make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		var got []string
		k, err := New(Config{Wait: time.Second, Clock: mock}, func(key string, _ Burst[int]) {
			mu.Lock()
			got = append(got, key)
			mu.Unlock()
			if key == "block" {
				close(entered)
				<-release
			}
		})
		require.NoError(t, err)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("block", 0))
		mock.Add(ms)
		require.NoError(t, k.Add("a", 1))
		mock.Add(999 * ms) // block is due, a is not
		<-entered
		mock.Add(time.Second) // a comes due while fire runs
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"block", "a"}, got)
	})
}
