package redismutex

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeOwner records the renewals of a lease and when it was lost; answer
// decides each renewal's result.
type fakeOwner struct {
	t0     time.Time
	answer func(n int, deadline time.Time) (bool, error)

	mu       sync.Mutex
	renewals []time.Duration // since t0, when each renewal was asked
	lostAt   time.Duration   // since t0, or -1
}

func newFakeOwner(answer func(n int, deadline time.Time) (bool, error)) *fakeOwner {
	return &fakeOwner{t0: time.Now(), answer: answer, lostAt: -1}
}

func (o *fakeOwner) renew(deadline time.Time) (bool, error) {
	o.mu.Lock()
	o.renewals = append(o.renewals, time.Since(o.t0))
	n := len(o.renewals)
	o.mu.Unlock()
	return o.answer(n, deadline)
}

func (o *fakeOwner) lose() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lostAt >= 0 {
		panic("lose called twice")
	}
	o.lostAt = time.Since(o.t0)
}

func (o *fakeOwner) seen() ([]time.Duration, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Duration(nil), o.renewals...), o.lostAt
}

const ms = time.Millisecond

// ttl is the TTL of the lease tests: renewals every 100 ms, a margin of
// 30 ms, retries every 30 ms.
const ttl = 300 * ms

var errDown = errors.New("connection refused")

// newTestRenewer returns a renewer of leases of TTL ttl, closed when the
// test ends.
func newTestRenewer(t *testing.T, ts *tasks) *renewer {
	r := newRenewer(ttl, ts)
	t.Cleanup(func() {
		ts.close()
		r.close()
		ts.wait()
	})
	return r
}

// start renews a lease of o, acquired at o.t0, on a new renewer; the
// renewer is closed when the test ends.
func start(t *testing.T, o *fakeOwner, ts *tasks) (*renewer, *lease) {
	r := newTestRenewer(t, ts)
	l := &lease{}
	r.add(l, o, o.t0)
	return r, l
}

func TestLeaseRenewsEveryThirdOfTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newFakeOwner(func(int, time.Time) (bool, error) { return true, nil })
		r, l := start(t, o, &tasks{})
		time.Sleep(10*ttl + ms)
		renewals, lostAt := o.seen()
		require.Equal(t, []time.Duration{100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms, 600 * ms, 700 * ms,
			800 * ms, 900 * ms, 1000 * ms, 1100 * ms, 1200 * ms, 1300 * ms, 1400 * ms, 1500 * ms, 1600 * ms,
			1700 * ms, 1800 * ms, 1900 * ms, 2000 * ms, 2100 * ms, 2200 * ms, 2300 * ms, 2400 * ms, 2500 * ms,
			2600 * ms, 2700 * ms, 2800 * ms, 2900 * ms, 3000 * ms}, renewals)
		require.Equal(t, time.Duration(-1), lostAt, "a lease renewed in time is not lost")
		require.False(t, r.stop(l), "stop reports that the lock was not lost")
		time.Sleep(ttl)
		renewals, _ = o.seen()
		require.Len(t, renewals, 30, "no renewal after stop")
	})
}

func TestLeaseLostWhenRenewalRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newFakeOwner(func(n int, _ time.Time) (bool, error) { return n < 3, nil })
		r, l := start(t, o, &tasks{})
		time.Sleep(2 * ttl)
		renewals, lostAt := o.seen()
		require.Equal(t, []time.Duration{100 * ms, 200 * ms, 300 * ms}, renewals)
		require.Equal(t, 300*ms, lostAt, "lost as soon as a renewal finds the lock taken")
		require.True(t, r.stop(l), "stop reports the loss")
	})
}

// A holder that cannot reach Redis retries every TTL/10 and gives the lock
// up at TTL minus the margin after the last successful call was sent,
// before Redis can expire it.
func TestLeaseLostAtLocalDeadlineWhenRedisUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newFakeOwner(func(n int, _ time.Time) (bool, error) {
			if n == 1 {
				time.Sleep(5 * ms) // the renewal sent at 100 ms answers at 105 ms
				return true, nil
			}
			return false, errDown
		})
		r, l := start(t, o, &tasks{})
		time.Sleep(3 * ttl)
		require.True(t, r.stop(l))
		renewals, lostAt := o.seen()
		// Renewed at 100 ms, so next at 205 ms; then every 30 ms until
		// 100 + 270 ms.
		require.Equal(t, []time.Duration{100 * ms, 205 * ms, 235 * ms, 265 * ms, 295 * ms, 325 * ms, 355 * ms}, renewals)
		require.Equal(t, 370*ms, lostAt, "lost at the send time of the last renewal that succeeded + TTL - TTL/10")
		require.Less(t, lostAt, 100*ms+ttl, "before Redis expires the lock")
	})
}

// A renewal that does not answer does not hold the lock past the local
// deadline; its late success does not bring the lock back.
func TestLeaseLostAtLocalDeadlineWhileRenewalHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := make(chan struct{})
		gotDeadline := make(chan time.Time, 1)
		o := newFakeOwner(func(_ int, deadline time.Time) (bool, error) {
			gotDeadline <- deadline
			<-answer
			return true, nil
		})
		r, l := start(t, o, &tasks{})
		time.Sleep(ttl)
		renewals, lostAt := o.seen()
		require.Equal(t, []time.Duration{100 * ms}, renewals)
		require.Equal(t, 270*ms, lostAt, "lost at the deadline, the renewal still in flight")
		require.Equal(t, o.t0.Add(270*ms), <-gotDeadline, "the renewal is told the deadline")
		close(answer)
		time.Sleep(2 * ttl)
		renewals, _ = o.seen()
		require.Len(t, renewals, 1, "a lost lease is not renewed")
		require.True(t, r.stop(l))
	})
}

func TestLeaseStopBeforeFirstRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newFakeOwner(func(int, time.Time) (bool, error) { return true, nil })
		r, l := start(t, o, &tasks{})
		time.Sleep(50 * ms)
		require.False(t, r.stop(l))
		time.Sleep(3 * ttl)
		renewals, lostAt := o.seen()
		require.Empty(t, renewals)
		require.Equal(t, time.Duration(-1), lostAt)
	})
}

// After Close nothing renews, and the lease does not call its lock lost:
// Close cancelled the Lock's Context with its own cause.
func TestLeaseAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ts tasks
		o := newFakeOwner(func(int, time.Time) (bool, error) { return true, nil })
		r, _ := start(t, o, &ts)
		time.Sleep(150 * ms)
		require.True(t, ts.close())
		r.close()
		ts.wait()
		time.Sleep(3 * ttl)
		renewals, lostAt := o.seen()
		require.Equal(t, []time.Duration{100 * ms}, renewals)
		require.Equal(t, time.Duration(-1), lostAt)
	})
}

// Close waits for a renewal in flight; the error it then gets is not a
// loss.
func TestLeaseCloseWaitsForRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ts tasks
		o := newFakeOwner(func(int, time.Time) (bool, error) {
			time.Sleep(20 * ms)
			return false, errDown
		})
		r, _ := start(t, o, &ts)
		time.Sleep(110 * ms)
		require.True(t, ts.close())
		r.close()
		ts.wait()
		require.Equal(t, 120*ms, time.Since(o.t0), "Close waited for the renewal")
		time.Sleep(3 * ttl)
		renewals, lostAt := o.seen()
		require.Equal(t, []time.Duration{100 * ms}, renewals)
		require.Equal(t, time.Duration(-1), lostAt)
	})
}

// One renewer keeps several leases, each on its own schedule; stopping
// one leaves the others.
func TestLeasesTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := func(int, time.Time) (bool, error) { return true, nil }
		r := newTestRenewer(t, &tasks{})
		a, b, c := newFakeOwner(ok), newFakeOwner(ok), newFakeOwner(ok) // times since now
		la, lb, lc := &lease{}, &lease{}, &lease{}
		r.add(la, a, time.Now())
		time.Sleep(50 * ms)
		r.add(lb, b, time.Now())
		time.Sleep(20 * ms)
		r.add(lc, c, time.Now())
		time.Sleep(50 * ms)
		require.False(t, r.stop(lc))
		time.Sleep(ttl - 120*ms + ms)
		ra, _ := a.seen()
		rb, _ := b.seen()
		rc, _ := c.seen()
		require.Equal(t, []time.Duration{100 * ms, 200 * ms, 300 * ms}, ra)
		require.Equal(t, []time.Duration{150 * ms, 250 * ms}, rb)
		require.Empty(t, rc)
		require.False(t, r.stop(la))
		require.False(t, r.stop(lb))
		time.Sleep(ttl)
		ra, _ = a.seen()
		require.Len(t, ra, 3, "none after stop")
	})
}

// Locks taken and released in turn wake the renewer's loop once, not once
// each: the loop keeps ticking every TTL/3 while they come, so that a new
// lease is never due before the loop runs anyway, and it sleeps without a
// timer once a whole tick passed without a lock.
func TestLeasesInTurnWakeTheLoopOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := func(int, time.Time) (bool, error) { return true, nil }
		r := newTestRenewer(t, &tasks{})
		wakes := func() time.Time {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.wakeAt
		}
		for i := range 50 {
			l := &lease{}
			r.add(l, newFakeOwner(ok), time.Now())
			require.False(t, r.stop(l)) // before the loop, if woken, ran
			synctest.Wait()
			require.False(t, wakes().IsZero(), "lock %d: the loop must not sleep without a timer while locks come", i)
			time.Sleep(ms)
		}
		time.Sleep(2*ttl/3 + ms)
		synctest.Wait()
		require.True(t, wakes().IsZero(), "idle for a whole tick: the loop sleeps without a timer")
	})
}
