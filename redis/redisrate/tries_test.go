package redisrate

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/flight"
	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// heldTries makes the TakeKey calls of a Keyed fly one at a time, the
// first held until the test opens the gate, so that the test decides
// which calls share a flight; it records the keys of each flight of
// several.
type heldTries struct {
	k       *Keyed
	gate    chan struct{}
	entered chan struct{}
	mu      sync.Mutex
	flights [][]string
}

func holdTries(k *Keyed) *heldTries {
	h := &heldTries{k: k, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	one, many := k.takes.One, k.takes.Many
	k.takes = &flight.Group[string, int64]{
		MaxFlying: 1,
		One: func(ctx context.Context, key string) (int64, error) {
			select {
			case h.entered <- struct{}{}:
			default:
			}
			<-h.gate
			return one(ctx, key)
		},
		Many: func(ctx context.Context, keys []string) ([]int64, error) {
			h.mu.Lock()
			h.flights = append(h.flights, slices.Clone(keys))
			h.mu.Unlock()
			return many(ctx, keys)
		},
	}
	return h
}

type taken struct {
	wait time.Duration
	err  error
}

// lead calls TakeKey(ctx, key), which is to fly first and be held, and
// returns once it is.
func (h *heldTries) lead(t *testing.T, ctx context.Context, key string) <-chan taken {
	t.Helper()
	done := h.call(ctx, key)
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first call did not fly")
	}
	return done
}

// queue calls TakeKey(ctx, key) and returns once it waits behind the
// calls before it, so that calls come in the order they are queued.
func (h *heldTries) queue(t *testing.T, ctx context.Context, key string) <-chan taken {
	t.Helper()
	waiting := h.k.takes.Waiting()
	done := h.call(ctx, key)
	deadline := time.Now().Add(5 * time.Second)
	for h.k.takes.Waiting() != waiting+1 {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not come to wait", key)
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

func (h *heldTries) call(ctx context.Context, key string) <-chan taken {
	done := make(chan taken, 1)
	go func() {
		w, err := h.k.TakeKey(ctx, key)
		done <- taken{w, err}
	}()
	return done
}

func (h *heldTries) seen() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.flights)
}

func newTestKeyed(t *testing.T, c redis.UniversalClient, rate float64, burst int) *Keyed {
	t.Helper()
	k, err := NewKeyed(t.Context(), c, KeyedConfig{Rate: rate, Burst: burst, Name: "tries", Prefix: "pacertest-" + t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, k.s.tag+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return k
}

// One flight of TakeKey calls of several keys takes each key's event as
// try.lua would, in the order the calls came, with one reading of the
// clock: a key that comes again sees its earlier takes, a paused key is
// refused for its pause, and it holds no other key back.
func TestTakeKeyFlightOfSeveralKeys(t *testing.T) {
	c := redistest.Client(t)
	k := newTestKeyed(t, c, 0.1, 2) // a token every 10 s
	ctx := t.Context()
	w, err := k.TakeKey(ctx, "b") // b has one token left
	require.NoError(t, err)
	require.Zero(t, w)
	require.NoError(t, k.PauseKey(ctx, "p", time.Minute))

	h := holdTries(k)
	lead := h.lead(t, ctx, "x")
	order := []string{"a", "b", "a", "p", "b", "a", "c"}
	var calls []<-chan taken
	for _, key := range order {
		calls = append(calls, h.queue(t, ctx, key))
	}
	close(h.gate)
	require.Equal(t, taken{}, <-lead)
	var got []taken
	for _, c := range calls {
		got = append(got, <-c)
	}
	require.Equal(t, [][]string{order}, h.seen(), "the calls that waited flew together, in order")
	for i, g := range got {
		require.NoError(t, g.err, order[i])
	}
	for _, i := range []int{0, 1, 2, 6} {
		require.Zero(t, got[i].wait, "%d: %s had a token", i, order[i])
	}
	require.Greater(t, got[3].wait, 59*time.Second, "p's pause")
	require.Greater(t, got[4].wait, 9*time.Second, "b's second take waits for a token")
	require.LessOrEqual(t, got[4].wait, 10*time.Second)
	require.Equal(t, 10*time.Second, got[5].wait,
		"a's two takes and its refusal read one clock: the third is exactly one interval out")

	tat, pause := k.s.keyedKeys("a")
	ttl, err := c.PTTL(ctx, tat).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, time.Duration(0), "a taken bucket's key expires")
	require.LessOrEqual(t, ttl, 22*time.Second)
	require.Zero(t, c.Exists(ctx, pause).Val())
	w, err = k.PeekKey(ctx, "c")
	require.NoError(t, err)
	require.Zero(t, w, "c, burst 2, gave one token")
	w, err = k.PeekKey(ctx, "a")
	require.NoError(t, err)
	require.Greater(t, w, 9*time.Second, "the refused take of a took nothing, and the two took two")
	require.LessOrEqual(t, w, 10*time.Second)
}

// A TakeKey whose ctx ends while it waits for a flight leaves with the
// ctx's error, takes nothing, and the calls behind it still fly.
func TestTakeKeyCancelledWhileWaiting(t *testing.T) {
	c := redistest.Client(t)
	k := newTestKeyed(t, c, 0.1, 1)
	ctx := t.Context()
	h := holdTries(k)
	lead := h.lead(t, ctx, "x")
	gone, cancel := context.WithCancel(ctx)
	bob := h.queue(t, gone, "bob")
	carol := h.queue(t, ctx, "carol")
	dave := h.queue(t, ctx, "dave")
	cancel()
	require.Equal(t, taken{err: context.Canceled}, <-bob)
	close(h.gate)
	require.Equal(t, taken{}, <-lead)
	require.Equal(t, taken{}, <-carol)
	require.Equal(t, taken{}, <-dave)
	require.Equal(t, [][]string{{"carol", "dave"}}, h.seen())
	tat, _ := k.s.keyedKeys("bob")
	require.Zero(t, c.Exists(ctx, tat).Val(), "bob's bucket was not touched")
}

// A flight whose server fails gives each of its calls the error, wrapped
// with the Keyed's name and the call's own key.
func TestTakeKeyFlightServerFails(t *testing.T) {
	srv := redistest.StartServer(t)
	c := redistest.Dial(t, &redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	k := newTestKeyed(t, c, 10, 1)
	ctx := t.Context()
	h := holdTries(k)
	lead := h.lead(t, ctx, "x")
	a := h.queue(t, ctx, "a")
	b := h.queue(t, ctx, "b")
	srv.Stop()
	close(h.gate)
	require.Error(t, (<-lead).err)
	for key, ch := range map[string]<-chan taken{"a": a, "b": b} {
		got := <-ch
		require.Error(t, got.err, key)
		require.Contains(t, got.err.Error(), `redisrate: TakeKey on "tries", key "`+key+`": `)
	}
	require.Equal(t, [][]string{{"a", "b"}}, h.seen())
}

// Many TakeKey calls of a few keys at once, which share flights, let
// through exactly each key's burst when no token comes back meanwhile.
func TestTakeKeysAtOnceKeepEachBurst(t *testing.T) {
	c := redistest.Client(t)
	const keys, burst, callers = 5, 4, 40
	k := newTestKeyed(t, c, 0.01, burst)
	var n [keys]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			key := string(rune('a' + i%keys))
			for range 3 {
				w, err := k.TakeKey(t.Context(), key)
				if err != nil {
					t.Error(err)
					return
				}
				if w == 0 {
					mu.Lock()
					n[i%keys]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range n {
		require.Equal(t, burst, n[i], "key %d", i)
	}
}
