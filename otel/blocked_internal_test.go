package pacerotel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/window"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func retry(key string, at time.Duration, attempt int, delay time.Duration) pacer.Event[string] {
	return pacer.Event[string]{Kind: pacer.EventRetry, Key: key, Time: t0.Add(at), Attempt: attempt, Size: 1, Delay: delay, Err: errors.New("boom")}
}

func keysOf(top []blockedView[string]) []string {
	var out []string
	for _, v := range top {
		out = append(out, v.key)
	}
	return out
}

func TestBlockedOrder(t *testing.T) {
	b := newBlocked[string](100, 0)
	for i, key := range []string{"c", "a", "d", "b"} {
		b.event(retry(key, time.Duration(i)*time.Second, 1, time.Minute))
	}
	b.event(retry("c", 10*time.Second, 2, time.Minute)) // c's second failure keeps its since
	oldest, ok, top := b.snapshotAt(t0.Add(time.Minute), 3, 4)
	require.True(t, ok)
	require.Equal(t, "c", oldest.key)
	require.Equal(t, 2, oldest.attempt)
	require.Equal(t, t0, oldest.since)
	require.Equal(t, []string{"c", "a", "d"}, keysOf(top))

	b.event(pacer.Event[string]{Kind: pacer.EventFinished, Key: "c"})
	b.event(pacer.Event[string]{Kind: pacer.EventDropped, Key: "a"})
	b.event(pacer.Event[string]{Kind: pacer.EventStarted, Key: "x"}) // not blocking
	_, _, top = b.snapshotAt(t0.Add(time.Minute), 3, 2)
	require.Equal(t, []string{"d", "b"}, keysOf(top))
	_, _, top = b.snapshotAt(t0.Add(time.Minute), 0, 2)
	require.Empty(t, top, "no per-key series")

	// Ties go to the key that blocked first.
	b = newBlocked[string](100, 0)
	for _, key := range []string{"z", "y", "x"} {
		b.event(retry(key, 0, 1, time.Minute))
	}
	_, _, top = b.snapshotAt(t0, 2, 3)
	require.Equal(t, []string{"z", "y"}, keysOf(top))
}

func TestBlockedHeld(t *testing.T) {
	b := newBlocked[string](100, time.Second)
	b.event(retry("k", 0, 1, time.Minute))
	b.event(pacer.Event[string]{Kind: pacer.EventHeld, Key: "k", Time: t0.Add(time.Minute), Attempt: 2, Size: 1, Behind: 4})
	oldest, ok, _ := b.snapshotAt(t0.Add(time.Hour), 1, 1)
	require.True(t, ok, "a held key has no retry to come due")
	require.True(t, oldest.held)
	require.Equal(t, 5, oldest.values)
	require.Equal(t, t0, oldest.since)
}

func TestBlockedBounded(t *testing.T) {
	b := newBlocked[string](2, 0)
	b.event(retry("a", 0, 1, time.Minute))
	b.event(retry("b", time.Second, 1, time.Minute))
	b.event(retry("c", 2*time.Second, 1, time.Minute)) // no room: not followed
	require.Equal(t, 2, b.len())
	b.event(retry("a", 3*time.Second, 2, time.Minute)) // followed keys still update
	oldest, _, _ := b.snapshotAt(t0, 0, 3)
	require.Equal(t, 2, oldest.attempt)
	b.event(pacer.Event[string]{Kind: pacer.EventFinished, Key: "a"})
	b.event(retry("c", 4*time.Second, 2, time.Minute))
	require.Equal(t, 2, b.len())
}

// A call the window cut short does not make its key blocked.
func TestBlockedCutShort(t *testing.T) {
	b := newBlocked[string](10, 0)
	for _, err := range []error{context.Canceled, window.ErrOutside} {
		e := retry("k", 0, 1, time.Hour)
		e.Err = err
		b.event(e)
	}
	require.Zero(t, b.len())
	b.event(retry("k", 0, 1, time.Minute))
	e := retry("k", time.Second, 1, time.Hour)
	e.Err = window.ErrOutside
	b.event(e)
	oldest, ok, _ := b.snapshotAt(t0.Add(time.Second), 0, 1)
	require.True(t, ok, "a blocked key stays blocked")
	require.Equal(t, t0, oldest.since)
}

// With a Store, keys other instances ran are forgotten.
func TestBlockedForgets(t *testing.T) {
	b := newBlocked[string](10, 30*time.Second)
	b.event(retry("due", 0, 1, time.Minute))
	b.event(pacer.Event[string]{Kind: pacer.EventHeld, Key: "held", Time: t0, Attempt: 3})
	b.event(pacer.Event[string]{Kind: pacer.EventHeld, Key: "recent", Time: t0.Add(80 * time.Second), Attempt: 3})

	_, _, top := b.snapshotAt(t0.Add(90*time.Second), 5, 3)
	require.Equal(t, []string{"due", "held", "recent"}, keysOf(top), "due 30 s ago: not yet forgotten")
	_, _, top = b.snapshotAt(t0.Add(91*time.Second), 5, 3)
	require.Equal(t, []string{"held", "recent"}, keysOf(top), "due more than 30 s ago")
	_, _, top = b.snapshotAt(t0.Add(91*time.Second), 5, 0)
	require.Equal(t, []string{"recent"}, keysOf(top), "the engine has none blocked: what was not heard of for 30 s goes")

	// In the process the events tell everything: nothing is forgotten.
	b = newBlocked[string](10, 0)
	b.event(retry("due", 0, 1, time.Minute))
	_, ok, _ := b.snapshotAt(t0.Add(time.Hour), 5, 0)
	require.True(t, ok)
}

func TestKeyString(t *testing.T) {
	require.Equal(t, "a b", keyString("a b"))
	require.Equal(t, "-7", keyString(-7))
	require.Equal(t, "7", keyString(int64(7)))
	require.Equal(t, "7", keyString(int32(7)))
	require.Equal(t, "7", keyString(uint(7)))
	require.Equal(t, "18446744073709551615", keyString(uint64(1<<64-1)))
	require.Equal(t, "7", keyString(uint32(7)))
	require.Equal(t, "1s", keyString(time.Second))
	require.Equal(t, "{1 2}", keyString(struct{ a, b int }{1, 2}))
}
