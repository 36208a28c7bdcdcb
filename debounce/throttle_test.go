package debounce

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// throttle is the configuration that makes a Keyed a throttle of wait:
// lodash's throttle(func, wait, {leading}) with trailing calls.
func throttle(wait time.Duration, leading bool) Config {
	return Config{Wait: wait, MaxWait: wait, Leading: leading}
}

// TestThrottleAtMostOneFirePerWait adds every millisecond for 320 ms to a
// throttle of 32 ms: the first value fires at once, then one trailing fire
// ends each wait, 11 in all and never two within 32 ms. A burst that opens
// right after a trailing fire is not quiet, so it does not lead.
func TestThrottleAtMostOneFirePerWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, true), r)
		defer closeKeyed(t, k)
		for i := range 320 {
			require.NoError(t, k.Add("a", i))
			time.Sleep(ms)
		}
		time.Sleep(time.Second)
		got := r.take()
		want := []fired{
			{At: 0, Key: "a", Values: []int{0}, First: 0, Last: 0, Count: 1},
			{At: 32 * ms, Key: "a", Values: ints(1, 32), First: 0, Last: 31 * ms, Count: 32},
		}
		for at := 64 * ms; at <= 320*ms; at += 32 * ms {
			from := int((at - 32*ms) / ms)
			want = append(want, fired{At: at, Key: "a", Values: ints(from, from+32), First: at - 32*ms, Last: at - ms, Count: 32})
		}
		require.Equal(t, want, got)
		for i := 1; i < len(got); i++ {
			require.GreaterOrEqual(t, got[i].At-got[i-1].At, 32*ms, "two fires within one wait")
		}
	})
}

// ints returns from, from+1, ..., to-1.
func ints(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// The tests below port lodash's throttle tests (throttle.spec.js, and the
// cases of debounce-and-throttle.spec.js that apply to throttle) from their
// documented contract: a throttle calls at most once per wait, on the
// leading edge at once and on the trailing edge with the latest value. Our
// trailing fire hands over every value of the wait; the latest is the last
// one. lodash's {trailing: false} has no counterpart in Config, and return
// values and this-binding none in fire, so those cases are left out.

func TestThrottleLodashThrottles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, true), r)
		defer closeKeyed(t, k)
		for _, v := range []int{1, 2, 3} {
			require.NoError(t, k.Add("a", v))
		}
		require.Len(t, r.take(), 1, "the first call is not throttled")
		time.Sleep(64 * ms)
		require.Equal(t, []fired{{At: 32 * ms, Key: "a", Values: []int{2, 3}, First: 0, Last: 0, Count: 3}}, r.take())
	})
}

func TestThrottleLodashNoTrailingCallWhenInvokedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, true), r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.Len(t, r.take(), 1)
		time.Sleep(64 * ms)
		require.Empty(t, r.take())
	})
}

// TestThrottleLodashCallsWhenInvokedRepeatedly: a key that never goes quiet
// is still served while the calls go on, leading or not.
func TestThrottleLodashCallsWhenInvokedRepeatedly(t *testing.T) {
	for _, leading := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			r := newRecorder()
			k := newKeyed(t, throttle(32*ms, leading), r)
			defer closeKeyed(t, k)
			for i := range 320 {
				require.NoError(t, k.Add("a", i))
				time.Sleep(ms)
			}
			got := r.take()
			require.Greater(t, len(got), 1)
			require.LessOrEqual(t, len(got), 11)
		})
	}
}

func TestThrottleLodashSecondCallAsSoonAsPossible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(128*ms, false), r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		time.Sleep(192 * ms)
		require.Len(t, r.take(), 1)
		require.NoError(t, k.Add("a", 2))
		time.Sleep(62 * ms) // 254 ms
		require.Empty(t, r.take())
		time.Sleep(130 * ms) // 384 ms
		require.Equal(t, []fired{{At: 320 * ms, Key: "a", Values: []int{2}, First: 192 * ms, Last: 192 * ms, Count: 1}}, r.take())
	})
}

// TestThrottleLodashLeadingOption: with Leading the first call runs at
// once, without it at the end of the wait; each runs once.
func TestThrottleLodashLeadingOption(t *testing.T) {
	for _, leading := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			r := newRecorder()
			k := newKeyed(t, throttle(32*ms, leading), r)
			defer closeKeyed(t, k)
			require.NoError(t, k.Add("a", 1))
			if leading {
				require.Len(t, r.take(), 1)
			} else {
				require.Empty(t, r.take())
			}
			time.Sleep(64 * ms)
			if !leading {
				require.Len(t, r.take(), 1)
			}
			require.Empty(t, r.take())
		})
	}
}

// TestThrottleLodashTrailingCall: a second call within the wait runs at its
// end, with the latest value.
func TestThrottleLodashTrailingCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(64*ms, true), r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("a", 2))
		time.Sleep(256 * ms)
		got := r.take()
		require.Len(t, got, 2)
		require.Equal(t, []int{2}, got[1].Values)
		require.Equal(t, 64*ms, got[1].At)
	})
}

// TestThrottleLodashSystemTimeZero runs on a clock that reads the Unix
// epoch: a time of zero is a time like any other.
func TestThrottleLodashSystemTimeZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		require.Zero(t, mock.Now().UnixNano())
		var mu sync.Mutex
		var got [][]int
		k, err := New(Config{Wait: 32 * ms, MaxWait: 32 * ms, Leading: true, Clock: mock}, func(_ string, b Burst[string]) {
			mu.Lock()
			defer mu.Unlock()
			vals := make([]int, len(b.Values))
			for i, v := range b.Values {
				vals[i] = int(v[0] - 'a')
			}
			got = append(got, vals)
		})
		require.NoError(t, err)
		defer func() { require.NoError(t, k.Close()) }()
		for _, v := range []string{"a", "b", "c"} {
			require.NoError(t, k.Add("k", v))
		}
		synctest.Wait()
		mu.Lock()
		require.Equal(t, [][]int{{0}}, got)
		mu.Unlock()
		mock.Add(64 * ms)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, [][]int{{0}, {1, 2}}, got)
		mu.Unlock()
	})
}

// TestThrottleLodashRecursiveCalls: fire may call Add for the same key;
// the values run in order, the first at once.
func TestThrottleLodashRecursiveCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k *Keyed[string, int]
		var mu sync.Mutex
		var got []int
		k, err := New(throttle(32*ms, true), func(key string, b Burst[int]) {
			mu.Lock()
			got = append(got, b.Values...)
			mu.Unlock()
			if next := b.Values[len(b.Values)-1] + 1; next < 3 {
				assert.NoError(t, k.Add(key, next)) // on the loop: no FailNow
			}
		})
		require.NoError(t, err)
		defer func() { require.NoError(t, k.Close()) }()
		require.NoError(t, k.Add("a", 0))
		synctest.Wait()
		mu.Lock()
		require.Equal(t, []int{0}, got)
		mu.Unlock()
		time.Sleep(256 * ms)
		mu.Lock()
		require.Equal(t, []int{0, 1, 2}, got)
		mu.Unlock()
	})
}

func TestThrottleLodashCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, false), r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.True(t, k.Cancel("a"))
		time.Sleep(64 * ms)
		require.Empty(t, r.take())
	})
}

// TestThrottleLodashCancelResets: Cancel forgets the key's calls, so the
// next one leads again at once.
func TestThrottleLodashCancelResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, true), r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.Len(t, r.take(), 1)
		require.True(t, k.Cancel("a"))
		require.NoError(t, k.Add("a", 2))
		require.Len(t, r.take(), 1)
		require.NoError(t, k.Add("a", 3))
		time.Sleep(64 * ms)
		require.Equal(t, []fired{{At: 32 * ms, Key: "a", Values: []int{3}, First: 0, Last: 0, Count: 2}}, r.take())
	})
}

func TestThrottleLodashFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, false), r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.True(t, k.Flush("a"))
		time.Sleep(64 * ms)
		require.Equal(t, []fired{{At: 0, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
	})
}

func TestThrottleLodashNoopWhenNothingQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, throttle(32*ms, true), r)
		defer closeKeyed(t, k)
		require.False(t, k.Cancel("a"))
		require.False(t, k.Flush("a"))
		time.Sleep(64 * ms)
		require.Empty(t, r.take())
	})
}
