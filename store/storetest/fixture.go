package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// ttl is the TTL of leases that are not meant to lapse in a scenario.
const ttl = time.Minute

// tick is the unit of the suite's short delays at scale 1: quiet periods,
// retry delays and short TTLs are small multiples of it.
const tick = 20 * time.Millisecond

// fixture is one try of a scenario: its engine, queue, test and scale.
type fixture struct {
	t       *testing.T
	s       store.Store
	twin    store.Store // Harness.Twin, or s
	beginTx func(context.Context) (Tx, error)
	q       string
	ctx     context.Context

	// scale stretches the try's durations: tick and late are tick and
	// Late multiplied by it (see Run).
	scale      int
	tick, late time.Duration
}

// other returns a second queue name of the scenario.
func (f *fixture) other(suffix string) string { return f.q + "/" + suffix }

// one is the ClaimParams of a worker taking one key, whole, for ttl.
func one() store.ClaimParams { return store.ClaimParams{Keys: 1, TTL: ttl} }

// bytesOf turns strings into values.
func bytesOf(vals []string) [][]byte {
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out
}

// add adds vals to key, ready at once.
func (f *fixture) add(key string, vals ...string) {
	f.t.Helper()
	f.addP(key, store.AddParams{}, vals...)
}

// addP adds vals to key with p.
func (f *fixture) addP(key string, p store.AddParams, vals ...string) {
	f.t.Helper()
	require.NoError(f.t, f.s.Add(f.ctx, f.q, key, bytesOf(vals), p))
}

// claim claims with p, now.
func (f *fixture) claim(p store.ClaimParams) ([]store.Lease, time.Duration) {
	f.t.Helper()
	ls, next, err := f.s.Claim(f.ctx, f.q, p)
	require.NoError(f.t, err)
	require.LessOrEqual(f.t, len(ls), p.Keys, "Claim leased more keys than asked")
	require.GreaterOrEqual(f.t, next, time.Duration(0), "Claim's next")
	return ls, next
}

// claimOne claims one key with p, which must be ready now.
func (f *fixture) claimOne(p store.ClaimParams) store.Lease {
	f.t.Helper()
	ls, _ := f.claim(p)
	require.Len(f.t, ls, 1, "Claim: want one ready key")
	return ls[0]
}

// none checks that no key is ready and returns Claim's next.
func (f *fixture) none() time.Duration {
	f.t.Helper()
	return f.noneWith(one())
}

// noneWith checks that a Claim with p leases nothing and returns its next.
func (f *fixture) noneWith(p store.ClaimParams) time.Duration {
	f.t.Helper()
	ls, next := f.claim(p)
	require.Empty(f.t, ls, "Claim leased a key that should not be ready")
	require.Positive(f.t, next, "Claim found nothing ready, so next must be positive")
	return next
}

// noneBefore checks that no key is ready, as none does, with a Claim that
// must come before b+d, the queue's earliest deadline, set by a call made
// after b; it returns Claim's next. When the Claim came too late to tell,
// the machine was too slow for the try (see slow).
func (f *fixture) noneBefore(b time.Time, d time.Duration) time.Duration {
	f.t.Helper()
	return f.noneWithBefore(one(), b, d)
}

// noneWithBefore is noneBefore with a Claim of p.
func (f *fixture) noneWithBefore(p store.ClaimParams, b time.Time, d time.Duration) time.Duration {
	f.t.Helper()
	ls, next := f.claim(p)
	if len(ls) > 0 {
		require.False(f.t, time.Now().Before(b.Add(d)), "Claim leased a key that should not be ready")
		f.slow(time.Since(b), d, "a Claim came after the deadline it had to come before")
	}
	require.Positive(f.t, next, "Claim found nothing ready, so next must be positive")
	return next
}

// await claims with p until a key comes, waiting with the engine's Wait in
// between, and fails if none came by notBefore+f.late. The lease must not
// come before notBefore, a lower bound of the deadline measured before the
// call that set it.
func (f *fixture) await(p store.ClaimParams, notBefore time.Time) store.Lease {
	f.t.Helper()
	end := time.Now().Add(f.late)
	if e := notBefore.Add(f.late); e.After(end) {
		end = e
	}
	for {
		ls, next := f.claim(p)
		if len(ls) > 0 {
			require.Len(f.t, ls, 1)
			require.False(f.t, time.Now().Before(notBefore),
				"key %q leased %v before its deadline", ls[0].Key, time.Until(notBefore))
			return ls[0]
		}
		left := time.Until(end)
		require.Positive(f.t, left, "no key became ready within %v of its deadline", f.late)
		require.NoError(f.t, f.s.Wait(f.ctx, f.q, min(next, left)))
	}
}

// finish ends l with o, which must succeed, and returns more.
func (f *fixture) finish(l store.Lease, o store.Outcome) bool {
	f.t.Helper()
	more, err := f.s.Finish(f.ctx, l, o)
	require.NoError(f.t, err, "Finish(%s) of key %q", kindName(o.Kind), l.Key)
	return more
}

// ack acks l and checks Finish's more.
func (f *fixture) ack(l store.Lease, more bool) {
	f.t.Helper()
	require.Equal(f.t, more, f.finish(l, store.Outcome{Kind: store.Ack}), "Finish's more after an Ack of key %q", l.Key)
}

// lost checks that Finish(l, o) and Extend(l) are refused with ErrLeaseLost.
func (f *fixture) lost(l store.Lease, o store.Outcome) {
	f.t.Helper()
	_, err := f.s.Finish(f.ctx, l, o)
	require.ErrorIs(f.t, err, store.ErrLeaseLost, "Finish(%s) of a lost lease", kindName(o.Kind))
	require.ErrorIs(f.t, f.s.Extend(f.ctx, l, ttl), store.ErrLeaseLost, "Extend of a lost lease")
}

// stats returns the counts of the scenario's queue.
func (f *fixture) stats() store.Stats {
	f.t.Helper()
	s, err := f.s.Stats(f.ctx, f.q)
	require.NoError(f.t, err)
	return s
}

// values checks that l holds key and want, in order.
func (f *fixture) values(l store.Lease, key string, want ...string) {
	f.t.Helper()
	require.Equal(f.t, key, l.Key, "lease key")
	require.Equal(f.t, f.q, l.Queue, "lease queue")
	require.Equal(f.t, want, strs(l.Values), "values of key %q", key)
}

// strs turns values into strings.
func strs(vals [][]byte) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

// sameBytes reports whether a and b hold the same values, an empty value
// being equal to a nil one.
func sameBytes(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// pause lets d pass, waiting on a queue that nothing else uses, which an
// engine keeps idle, so that the wait costs the engine what a real idle
// worker's does.
func (f *fixture) pause(d time.Duration) {
	f.t.Helper()
	f.pauseUntil(time.Now().Add(d))
}

// pauseUntil lets time pass until t.
func (f *fixture) pauseUntil(t time.Time) {
	f.t.Helper()
	for left := time.Until(t); left > 0; left = time.Until(t) {
		require.NoError(f.t, f.s.Wait(f.ctx, f.other("idle"), left))
	}
}

// slow ends this try of the scenario when the machine was too slow for its
// timings to prove anything: something took took where the scenario needs
// it to take less than limit, one of its durations. Run runs the scenario
// again, on a queue of its own, with its durations stretched so that limit
// becomes at least twice took (see Run). The scenario's goroutine must call
// it, and only once every assertion made so far held.
func (f *fixture) slow(took, limit time.Duration, why string) {
	panic(tooSlow{why: why, took: took, limit: limit})
}

// kindName names an outcome for messages.
func kindName(k store.OutcomeKind) string {
	switch k {
	case store.Ack:
		return "Ack"
	case store.Drop:
		return "Drop"
	case store.Retry:
		return "Retry"
	case store.Defer:
		return "Defer"
	case store.Hold:
		return "Hold"
	}
	return fmt.Sprintf("OutcomeKind(%d)", k)
}
