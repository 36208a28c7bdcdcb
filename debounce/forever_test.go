package debounce

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// forever is the longest Duration, a Wait or MaxWait that means "never".
const forever = time.Duration(math.MaxInt64)

// TestForeverWait: with a Wait of forever, a burst never fires by itself;
// its deadline saturates at the end of time instead of wrapping into the
// past. Shutdown still fires it.
func TestForeverWait(t *testing.T) {
	for _, cfg := range []Config{
		{Wait: forever},
		{Wait: forever, MaxWait: forever},
		{Wait: forever, MaxItems: 10},
	} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRecorder()
				k := newKeyed(t, cfg, r)
				defer closeKeyed(t, k)
				require.NoError(t, k.Add("a", 1))
				time.Sleep(time.Second)
				require.NoError(t, k.Add("a", 2)) // last+Wait saturates too
				time.Sleep(1000 * time.Hour)
				require.Empty(t, r.take())
				require.Equal(t, 1, k.Pending())
				require.NoError(t, k.Shutdown(context.Background()))
				require.Equal(t, []fired{{At: 1000*time.Hour + time.Second, Key: "a", Values: []int{1, 2}, First: 0, Last: time.Second, Count: 2}}, r.take())
			})
		})
	}
}

// TestForeverMaxWait: a MaxWait of forever is no bound at all, not a
// deadline in the past; the burst fires Wait after its last Add.
func TestForeverMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, MaxWait: forever}, r)
		defer closeKeyed(t, k)
		var vals []int
		for i := range 20 {
			require.NoError(t, k.Add("a", i))
			vals = append(vals, i)
			time.Sleep(500 * ms)
		}
		require.Empty(t, r.take())
		time.Sleep(1000 * time.Hour)
		require.Equal(t, []fired{{At: 10500 * ms, Key: "a", Values: vals, First: 0, Last: 9500 * ms, Count: 20}}, r.take())
	})
}

// TestForeverLeading: with Leading, the first value fires at once and the
// rest of a burst that waits forever never does by itself.
func TestForeverLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: forever, Leading: true}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		require.NoError(t, k.Add("a", 2))
		time.Sleep(1000 * time.Hour)
		require.Equal(t, []fired{{At: 0, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
		require.Equal(t, 1, k.Pending())
	})
}

// TestEndOfTime: a burst that waits forever fires at the last instant the
// clock can express, not before; fake time gets there in no time.
func TestEndOfTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: forever}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("a", 1))
		end := time.Unix(0, math.MaxInt64)
		time.Sleep(time.Until(end) - time.Nanosecond)
		require.Empty(t, r.take())
		time.Sleep(time.Nanosecond) // the last one there is
		require.Equal(t, []fired{{At: end.Sub(r.start), Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1}}, r.take())
	})
}

// FuzzDeadline adds values to two keys at fuzzed gaps, with any Wait,
// MaxWait and AddWait up to forever, and checks every fire against the
// model: a burst fires exactly at its deadline, which saturates at the end
// of time, so never before the earliest legal one.
func FuzzDeadline(f *testing.F) {
	adds := []byte{0, 6, 1, 200, 13, 255, 2, 7}
	for _, w := range []int64{math.MaxInt64, math.MinInt64, 0, 1, int64(time.Second)} {
		for _, mw := range []int64{0, math.MaxInt64, math.MinInt64, 1, int64(time.Second)} {
			f.Add(w, mw, false, adds, int64(math.MaxInt64), w)
			f.Add(w, mw, true, adds, int64(time.Hour), int64(time.Millisecond))
		}
	}
	f.Fuzz(func(t *testing.T, wait, maxWait int64, leading bool, adds []byte, horizon, ownWait int64) {
		cfg := Config{Wait: time.Duration(wait), MaxWait: time.Duration(maxWait), Leading: leading}
		if cfg.validate() != nil {
			_, err := New(cfg, func(string, Burst[int]) {})
			require.Error(t, err)
			return
		}
		adds = adds[:min(len(adds), 64)]
		// Gaps are multiples of a unit on the scale of Wait, so that bursts
		// both grow and end, and of at most an hour, so that the Adds end
		// long before the end of time (64 Adds, 63 units apart).
		unit := min(cfg.Wait/8+1, time.Hour)
		synctest.Test(t, func(t *testing.T) {
			r := newRecorder()
			k := newKeyed(t, cfg, r)
			defer closeKeyed(t, k)
			m := newModel(cfg, r.start)
			for i, b := range adds {
				key := []string{"a", "b"}[b&1]
				switch {
				case b&2 == 0:
					require.NoError(t, k.Add(key, i))
					m.add(key, i)
				case ownWait > 0:
					require.NoError(t, k.AddWait(key, i, time.Duration(ownWait)))
					m.addWait(key, i, time.Duration(ownWait))
				default:
					require.Error(t, k.AddWait(key, i, time.Duration(ownWait)))
				}
				gap := time.Duration(b>>2) * unit
				time.Sleep(gap)
				m.advance(gap)
			}
			// The clock cannot read past the end of time: stop there.
			rest := max(0, min(time.Duration(horizon), m.limit-m.now))
			time.Sleep(rest)
			m.advance(rest)
			got := r.take()
			for _, f := range got {
				if f.At != f.First { // not a leading fire
					// The shortest quiet period any burst had.
					w := min(cfg.Wait, time.Duration(max(ownWait, 1)))
					legal := m.deadline(&modelBurst{first: f.First, last: f.Last, wait: w})
					require.GreaterOrEqual(t, f.At, legal, "%+v fired early", f)
				}
			}
			require.Equal(t, m.fires, got)
		})
	})
}

func TestUntil(t *testing.T) {
	for _, c := range []struct {
		at, now int64
		want    time.Duration
	}{
		{10, 3, 7},
		{3, 10, -7},
		{math.MaxInt64, 0, forever},
		{math.MaxInt64, -1, forever},
		{math.MinInt64, 1, math.MinInt64},
		{math.MaxInt64, math.MaxInt64, 0},
	} {
		require.Equal(t, c.want, until(c.at, c.now), "until(%d, %d)", c.at, c.now)
	}
}
