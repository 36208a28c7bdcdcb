//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// mpMode is a Runner configuration that TestMultiProcessKill runs.
type mpMode struct {
	name              string
	maxBatch          int
	debounce, maxWait time.Duration
}

// mpLeaseTTL is the instances' LeaseTTL: a killed instance's leases
// lapse within it.
const mpLeaseTTL = 2 * time.Second

// TestMultiProcessKill runs a service of three OS processes, each a pacer
// Runner with 2 workers on one Redis queue, and adds 20,000 values over 500
// keys, each at a random instance. Once a third of them were added, one
// instance's two workers freeze in their handlers, after doing their work
// and before returning, and the instance is killed with SIGKILL, then
// started again. Once the queue is empty, the handlers' event logs show
// that:
//
//   - every value whose Add returned nil was handled successfully;
//   - the values handled twice are exactly those of the two batches the
//     kill cut short, which ran again, with the same values, at the next
//     attempt, once their leases lapsed;
//   - no two calls held one key at once: a key's calls, in fence order,
//     each started after the one before returned (or its process died),
//     so the fences grow in the order the calls started;
//   - each key's values first succeeded in the order their Adds returned;
//   - with a debounce: 3 values of one key, added at the 3 instances
//     within half the quiet period, ran as one batch; and a key fed a
//     value every 2/5 of the quiet period, at each instance in turn, ran
//     before the feed ended: its first batch, closed by MaxWait, has the
//     values of MaxWait, from every instance (unless the machine stalled
//     the feed for the quiet period, which the test then reports).
//
// It runs in strict mode (MaxBatch 1) and in coalescing mode with a
// debounce and a MaxWait.
func TestMultiProcessKill(t *testing.T) {
	client(t) // skips without Redis
	for _, m := range []mpMode{
		{name: "strict", maxBatch: 1},
		{name: "coalesce debounced", debounce: 200 * time.Millisecond, maxWait: 800 * time.Millisecond},
	} {
		t.Run(m.name, func(t *testing.T) { testMultiProcessKill(t, m) })
	}
}

func testMultiProcessKill(t *testing.T, m mpMode) {
	const (
		instances = 3
		workers   = 2
		values    = 20_000
		keys      = 500
		senders   = 32
	)
	s, _, prefix := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel() // kills the instances left, if the test failed
	began := time.Now()
	f := startFleet(t, ctx, childConfig{URL: serverURL(), Prefix: prefix, Name: "mp", Workers: workers,
		MaxBatch: m.maxBatch, Debounce: m.debounce, MaxWait: m.maxWait, LeaseTTL: mpLeaseTTL}, instances)
	a := newAdded()

	var bursts map[string][]int
	var fed fedKey
	if m.debounce > 0 {
		bursts = addBursts(t, f, a, m.debounce/2)
		fed = feed(t, f, a, "m", m.debounce*2/5, 2*m.maxWait)
	}

	// Each key has one sender, which waits for each answer before its
	// next Add: the order of a key's acknowledgements is its Add order.
	killAt := make(chan struct{})
	var acked atomic.Int64
	var sending sync.WaitGroup
	for g := range senders {
		sending.Go(func() {
			var own []string
			for k := g; k < keys; k += senders {
				own = append(own, fmt.Sprintf("k%03d", k))
			}
			for n := 0; n < values/senders && ctx.Err() == nil; {
				key := own[rand.N(len(own))]
				v := a.value(key)
				err := f.add(key, v)
				switch {
				case err == nil:
					a.ack(key, v)
					n++
					if acked.Add(1) == values/3 {
						close(killAt)
					}
				case errors.Is(err, errGone):
					if a.lost(v) > 2*senders {
						t.Errorf("%d Adds went unanswered", 2*senders)
						return
					}
				default:
					t.Errorf("add %d to %s: %v", v, key, err)
					return
				}
			}
		})
	}
	t.Cleanup(func() { // the senders end once the instances are killed
		cancel()
		sending.Wait()
	})
	select {
	case <-killAt:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d values added in 60 s", acked.Load(), values)
	}
	role := rand.N(instances)
	victim, dead := f.kill(role)
	f.restart(role)
	sending.Wait()
	require.False(t, t.Failed())
	addedIn := time.Since(began)

	require.Eventually(t, func() bool {
		st, err := s.Stats(ctx, "mp")
		return err == nil && st.Values == 0
	}, 60*time.Second, 20*time.Millisecond, "every value stored gets handled")
	st, err := s.Stats(ctx, "mp")
	require.NoError(t, err)
	require.Equal(t, store.Stats{}, st, "nothing left, no dead letter")
	f.stop()
	wall := time.Since(began)

	var calls []*call
	for _, in := range f.all {
		cs, drops := readCalls(t, in)
		require.Empty(t, drops, "instance %d.%d dropped no batch", in.role, in.gen)
		calls = append(calls, cs...)
	}
	keyCalls := byKey(calls)

	// The kill cut short the frozen calls, and only them: every other call
	// returned nil and the engine took its Ack. A cut call held its key
	// until its process died.
	var cut []*call
	twice := map[int]bool{}
	for _, c := range calls {
		if c.in == victim && !c.acked {
			if c.did.IsZero() || !c.end.IsZero() {
				t.Fatalf("key %s, fence %d: a cut call did its work, froze and never returned", c.key, c.fence)
			}
			c.end = dead
			cut = append(cut, c)
			for _, v := range c.values {
				twice[v] = true
			}
			continue
		}
		if !c.ok || !c.acked {
			t.Fatalf("instance %d.%d: key %s, fence %d: the call failed or was not acked", c.in.role, c.in.gen, c.key, c.fence)
		}
	}
	require.Len(t, cut, workers, "the kill cut the calls of the frozen workers")

	// Every value acknowledged was handled; only the cut ones twice.
	handled := map[int]int{}
	for _, c := range calls {
		if !c.did.IsZero() {
			for _, v := range c.values {
				handled[v]++
			}
		}
	}
	dups := map[int]bool{}
	for v, n := range handled {
		if _, ok := a.key[v]; !ok {
			t.Fatalf("value %d was handled but never added", v)
		}
		if n > 1 {
			dups[v] = true
		}
	}
	require.Equal(t, twice, dups, "the values handled twice are those of the cut calls")
	for key, vs := range a.acked {
		for _, v := range vs {
			if handled[v] == 0 {
				t.Fatalf("key %s: value %d, acknowledged, was not handled", key, v)
			}
		}
	}

	// No two calls held a key at once, and the fences grow in start order.
	for key, cs := range keyCalls {
		for i := 1; i < len(cs); i++ {
			prev, c := cs[i-1], cs[i]
			if c.fence == prev.fence {
				t.Fatalf("key %s: two calls under fence %d", key, c.fence)
			}
			if c.start.Before(prev.end) {
				t.Fatalf("key %s: the call under fence %d (instance %d.%d) started %v before the one under fence %d (instance %d.%d) ended",
					key, c.fence, c.in.role, c.in.gen, prev.end.Sub(c.start), prev.fence, prev.in.role, prev.in.gen)
			}
		}
	}

	// A cut batch runs again, the same values at the next attempt, once
	// the dead holder's lease lapsed.
	var rerun time.Duration
	for _, c := range cut {
		cs := keyCalls[c.key]
		i := indexOf(cs, c)
		require.Less(t, i+1, len(cs), "key %s: the cut batch ran again", c.key)
		next := cs[i+1]
		require.Equal(t, c.values, next.values, "key %s: the same batch ran again", c.key)
		require.Equal(t, c.attempt+1, next.attempt, "key %s: at the next attempt", c.key)
		rerun = max(rerun, next.start.Sub(dead))
	}
	require.Less(t, rerun, mpLeaseTTL+5*time.Second, "the cut batches ran again soon after their leases lapsed")

	// Each key's values first succeeded in the order their Adds returned.
	total := 0
	for key, want := range a.acked {
		total += len(want)
		var got []int
		seen := map[int]bool{}
		for _, c := range keyCalls[key] {
			if c.did.IsZero() {
				continue
			}
			for _, v := range c.values {
				if !seen[v] && !a.maybe[v] {
					got = append(got, v)
				}
				seen[v] = true
			}
		}
		if !slices.Equal(want, got) {
			t.Fatalf("key %s: values first succeeded in the order %v, not in Add order %v", key, got, want)
		}
	}

	// The debounce held across the instances.
	for key, vs := range bursts {
		require.Equal(t, vs, keyCalls[key][0].values, "key %s: its values, added at 3 instances within Debounce/2, ran as one batch", key)
	}
	if fed.roles != nil {
		first := keyCalls["m"][0]
		require.True(t, first.start.Before(fed.until), "key m ran before its feed ended")
		if fed.gap < m.debounce {
			// Never quiet for the quiet period: MaxWait closed the burst.
			from := map[int]bool{}
			for _, v := range first.values {
				from[fed.roles[v]] = true
			}
			require.GreaterOrEqual(t, len(first.values), int(m.maxWait/fed.gap), "key m's first batch has the values of MaxWait")
			require.Len(t, from, 3, "key m's first batch has values from every instance")
		} else {
			t.Logf("key m's feed paused for %v, longer than the quiet period: MaxWait is not checked", fed.gap)
		}
	}

	t.Logf("%d values acknowledged in %v (%d more unanswered at the kill); %d handler calls; "+
		"%d values of the %d batches cut by the kill handled twice, again %v after it; %v in all",
		total, addedIn.Round(time.Millisecond), len(a.maybe), len(calls),
		len(dups), len(cut), rerun.Round(time.Millisecond), wall.Round(time.Millisecond))
}

func indexOf(cs []*call, c *call) int {
	for i, x := range cs {
		if x == c {
			return i
		}
	}
	return -1
}

// added is what the parent knows of the values it sent: those an instance
// acknowledged, per key in the order of the acknowledgements, and those
// whose instance died before it answered, which may or may not be stored.
type added struct {
	mu    sync.Mutex
	next  int
	key   map[int]string // every value sent
	acked map[string][]int
	maybe map[int]bool
}

func newAdded() *added {
	return &added{key: map[int]string{}, acked: map[string][]int{}, maybe: map[int]bool{}}
}

// value returns a new value for key.
func (a *added) value(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	a.key[a.next] = key
	return a.next
}

func (a *added) ack(key string, v int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acked[key] = append(a.acked[key], v)
}

// lost records v as unanswered, and returns how many are.
func (a *added) lost(v int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.maybe[v] = true
	return len(a.maybe)
}

// addBursts adds 3 values to each of 50 fresh keys, one at each instance
// in a random order, the 3 Adds of a key within within, and returns each
// key's values in Add order. A key whose Adds took longer, on a machine
// that stalled, cannot show the debounce: it is left out, and another key
// takes its place, up to 50 more.
func addBursts(t *testing.T, f *fleet, a *added, within time.Duration) map[string][]int {
	t.Helper()
	bursts := map[string][]int{}
	var slow []time.Duration
	for i := 0; len(bursts) < 50 && len(slow) < 50; i++ {
		key := fmt.Sprintf("d%03d", i)
		var vs []int
		began := time.Now()
		for _, role := range rand.Perm(3) {
			v := a.value(key)
			require.NoError(t, f.pick(role).add(key, v))
			a.ack(key, v)
			vs = append(vs, v)
		}
		if took := time.Since(began); took >= within {
			slow = append(slow, took)
			continue
		}
		bursts[key] = vs
	}
	require.Len(t, bursts, 50, "the 3 Adds of a key took less than %v: only %d times, too slow: %v", within, len(bursts), slow)
	if len(slow) > 0 {
		t.Logf("%d keys left out of the debounce check, their 3 Adds took %v", len(slow), slow)
	}
	return bursts
}

// fedKey is what feed did.
type fedKey struct {
	roles map[int]int   // the instance of each value
	until time.Time     // when the last Add returned
	gap   time.Duration // the longest two Adds may have been apart
}

// feed adds a value to key every every, at each instance in turn, for
// span.
func feed(t *testing.T, f *fleet, a *added, key string, every, span time.Duration) fedKey {
	t.Helper()
	fed := fedKey{roles: map[int]int{}}
	began := time.Now()
	var sent time.Time
	for i := 0; time.Since(began) < span; i++ {
		v := a.value(key)
		if i > 0 {
			time.Sleep(every) // paces the feed
		}
		at := time.Now()
		require.NoError(t, f.pick(i%3).add(key, v))
		fed.until = time.Now()
		a.ack(key, v)
		fed.roles[v] = i % 3
		if i > 0 {
			// The Add before reached Redis after it was sent, this one
			// before it returned.
			fed.gap = max(fed.gap, fed.until.Sub(sent))
		}
		sent = at
	}
	return fed
}
