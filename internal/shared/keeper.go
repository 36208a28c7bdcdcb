package shared

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/callctx"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// A leaseKeeper keeps one lease while the Runner works on it: it renews
// the lease every TTL/3, and stops the work at the lease's deadline
// (engine.Deadline), which only a renewal that succeeded moves; then it
// makes the call that ends the lease. The renewals run on goroutines of
// their own, so that one that does not answer cannot hold the keeper past
// the deadline.
//
// Its goroutine (one of engineCalls) starts when the first renewal is
// due, which is before the deadline: a batch that ends sooner, as most
// do, costs a timer and the goroutine of the call that ends it, not a
// goroutine that waits for that call besides.
type leaseKeeper struct {
	calls  *engineCalls
	lost   atomic.Pointer[error]
	ending atomic.Bool // the work is over: no more renewals, the end comes

	mu    sync.Mutex
	state int             // keeperArmed, keeperRunning or keeperEnded
	timer stopper         // stops the start of the keeper, while keeperArmed
	ends  chan engine.Job // the call that ends the lease, to the keeper's goroutine
	gone  chan struct{}   // closed when the keeper's goroutine returned
}

// The states of a leaseKeeper.
const (
	keeperArmed   = iota // its goroutine starts when the first renewal is due
	keeperRunning        // its goroutine runs, or ran
	keeperEnded          // the end came first, on a goroutine of its own
)

var _ engine.Keeper = (*leaseKeeper)(nil)

// End implements engine.Keeper.
func (k *leaseKeeper) End(call engine.Job) bool {
	k.mu.Lock()
	switch {
	case k.state == keeperArmed && k.timer.stop():
		k.state = keeperEnded
		k.mu.Unlock()
		k.calls.start(call) // counted by engineCalls as the keeper was
		return true
	case k.state == keeperEnded: // a second end: the lease is ended
		k.mu.Unlock()
		return false
	}
	// The keeper runs, or its timer fired and it is about to.
	ends, gone := k.channels()
	k.mu.Unlock()
	select {
	case ends <- call:
		return true
	case <-gone:
		return false
	}
}

// start starts the keeper's goroutine, which runs keep, unless the end
// came first. It runs on the timer's goroutine (or on the caller of a
// mock clock's Add): keep runs on a goroutine of engineCalls.
func (k *leaseKeeper) start(keep func(ends <-chan engine.Job)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.state != keeperArmed {
		return
	}
	k.state = keeperRunning
	ends, gone := k.channels()
	k.calls.start(engine.JobFunc(func() {
		defer close(gone)
		keep(ends)
	}))
}

// channels returns the channels the keeper's goroutine serves, made by
// the first to ask, under k.mu: its start, or an end that came as its
// timer fired.
func (k *leaseKeeper) channels() (chan engine.Job, chan struct{}) {
	if k.ends == nil {
		k.ends, k.gone = make(chan engine.Job), make(chan struct{})
	}
	return k.ends, k.gone
}

// A keptLease is a lease that a leaseKeeper keeps, with what Keep makes
// for it, in one allocation.
type keptLease[K comparable, V any] struct {
	leaseKeeper
	s      *Engine[K, V]
	parent context.Context // Keep's, under which the renewals run
	remote *engine.Remote
	ctx    callctx.Fenced // to work under
	cancel context.CancelCauseFunc
}

// Keep implements engine.Engine with a leaseKeeper. The returned ctx
// carries the lease's fence (callctx.Fence) and is cancelled with engine.ErrLeaseLost
// when the store refuses a renewal, or at the lease's deadline, whatever
// the renewal in flight does: the handler is stopped before another
// instance can lease the key. The returned Kept's Over stops the renewals
// and reports the loss, also of a lease whose deadline passed while nobody
// looked; the keeper then waits for the call that ends the lease, and
// makes it, until the lease's deadline at most.
func (s *Engine[K, V]) Keep(ctx context.Context, l engine.Lease[K, V]) (context.Context, engine.Kept) {
	k := &keptLease[K, V]{leaseKeeper: leaseKeeper{calls: s.calls}, s: s, parent: ctx, remote: l.Remote}
	var cctx context.Context
	cctx, k.cancel = context.WithCancelCause(ctx)
	k.ctx = callctx.Fenced{Context: cctx, Fence: l.Remote.Lease.Fence}
	l.Remote.Keeper = k
	// The first renewal is due before the deadline, but for a TTL so short
	// that its margin takes most of it.
	due := l.Remote.Claimed.Add(s.ttl / 3)
	if at := l.Remote.Deadline.At(); at.Before(due) {
		due = at
	}
	s.calls.busy.Add(1) // for the keeper, or the call that ends the lease
	if d := due.Sub(s.clk.Now()); d > 0 {
		k.mu.Lock()
		k.timer = s.calls.arm(d, k)
		k.mu.Unlock()
	} else { // a lease that waited for a worker: renewed at once
		k.start()
	}
	return &k.ctx, k
}

// start starts the keeper; see leaseKeeper.start.
func (k *keptLease[K, V]) start() { k.leaseKeeper.start(k.keep) }

// ring starts the keeper when its alarm rings (calls.arm).
func (k *keptLease[K, V]) ring() { k.start() }

// keep keeps the lease until it is ended or lost, and then cancels the
// work's ctx.
func (k *keptLease[K, V]) keep(ends <-chan engine.Job) {
	if err := k.s.keep(k.parent, k.remote, ends, &k.ending); err != nil {
		k.lost.Store(&err)
		k.cancel(err)
		k.s.warn("pacer: lease lost, the handler's ctx is cancelled", slog.String("key", k.remote.Lease.Key), slog.Uint64("fence", k.remote.Lease.Fence), slog.Any("err", err))
	}
}

// Over implements engine.Kept.
func (k *keptLease[K, V]) Over() error {
	k.ending.Store(true)
	k.cancel(nil)
	if lost := k.lost.Load(); lost != nil {
		return *lost
	}
	if k.remote.Deadline.Lapsed(k.s.clk.Now()) {
		return k.s.lapsed(nil)
	}
	return nil
}

// keep renews r until an end comes, which it runs, and returns nil; or
// until it cannot, and returns why: the store refused a renewal, or r's
// deadline came first. The first renewal comes TTL/3 after the claim (a
// lease that waited for a worker, claimed by an Ack in the background,
// say, is renewed sooner), the next TTL/3 after one succeeded, and TTL/10
// after one failed; none once ending is set.
func (s *Engine[K, V]) keep(ctx context.Context, r *engine.Remote, ends <-chan engine.Job, ending *atomic.Bool) error {
	d := r.Deadline
	next := r.Claimed.Add(s.ttl / 3)
	var (
		renewal *engineCall[struct{}] // in flight, or nil
		sent    time.Time             // when it was sent
		failed  error                 // why the last renewal failed
	)
	t := s.clk.NewTimer(time.Hour) // reset below
	defer t.Stop()
	for {
		now := s.clk.Now()
		if d.Lapsed(now) {
			if renewal != nil && renewal.stop() {
				failed = hung(now.Sub(sent), failed)
			}
			return s.lapsed(failed)
		}
		if renewal == nil && !now.Before(next) && !ending.Load() {
			sent = now
			renewal = startCall(s.calls, ctx, d.At(), func(ctx context.Context) (struct{}, error) {
				return struct{}{}, s.st.Extend(ctx, r.Lease, s.ttl)
			}, nil)
			continue
		}
		wake := d.At()
		var answer chan callResult[struct{}]
		if renewal != nil {
			answer = renewal.result
		} else if next.Before(wake) && !ending.Load() {
			wake = next
		}
		t.Reset(wake.Sub(now))
		select {
		case end := <-ends:
			if renewal != nil {
				// The end waits for it, as two calls at once would take
				// two of the client's connections.
				select {
				case <-answer:
				case <-t.C():
					renewal.stop()
				}
			}
			end.Run()
			return nil
		case <-t.C():
		case res := <-answer:
			renewal = nil
			now = s.clk.Now()
			switch {
			case res.err == nil:
				if d.Renewed(sent, now) {
					failed, next = nil, now.Add(s.ttl/3)
				}
			case errors.Is(res.err, store.ErrLeaseLost):
				return engine.ErrLeaseLost
			default:
				failed, next = res.err, now.Add(s.ttl/10)
				s.warn("pacer: lease renewal failed, will try again", slog.String("key", r.Lease.Key), slog.Any("err", res.err))
			}
		}
	}
}

// hung says that a renewal sent ago has not answered, after one that
// failed with failed if not nil.
func hung(ago time.Duration, failed error) error {
	if failed != nil {
		return fmt.Errorf("the renewal sent %v before has not answered, the one before failed: %w", ago.Round(time.Millisecond), failed)
	}
	return fmt.Errorf("the renewal sent %v before has not answered", ago.Round(time.Millisecond))
}

// lapsed is why a lease was lost at its deadline, with why the renewals
// failed, if they did.
func (s *Engine[K, V]) lapsed(failed error) error {
	m := engine.Margin(s.ttl)
	err := fmt.Errorf("%w: no renewal succeeded for %v, the LeaseTTL %v less its margin of %v", engine.ErrLeaseLost, s.ttl-m, s.ttl, m)
	if failed != nil {
		return fmt.Errorf("%w: %w", err, failed)
	}
	return err
}
