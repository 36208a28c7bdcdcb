package shared

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/callctx"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// A leaseKeeper keeps one lease while the Runner works on it, on a
// goroutine of engineCalls: it renews the lease every TTL/3, and stops the
// work at the lease's deadline (engine.Deadline), which only a renewal
// that succeeded moves; then it makes the call that ends the lease. The
// renewals run on goroutines of their own, so that one that does not
// answer cannot hold the keeper past the deadline.
type leaseKeeper struct {
	ends   chan func()   // the call that ends the lease
	gone   chan struct{} // closed when the keeper returned
	lost   atomic.Pointer[error]
	ending atomic.Bool // the work is over: no more renewals, the end comes
}

var _ engine.Keeper = (*leaseKeeper)(nil)

// End implements engine.Keeper.
func (k *leaseKeeper) End(call func()) bool {
	select {
	case k.ends <- call:
		return true
	case <-k.gone:
		return false
	}
}

// Keep implements engine.Engine with a leaseKeeper. The returned ctx
// carries the lease's fence (callctx.Fence) and is cancelled with engine.ErrLeaseLost
// when the store refuses a renewal, or at the lease's deadline, whatever
// the renewal in flight does: the handler is stopped before another
// instance can lease the key. The returned function stops the renewals
// and reports the loss, also of a lease whose deadline passed while nobody
// looked; the keeper then waits for the call that ends the lease, and
// makes it, until the lease's deadline at most.
func (s *Engine[K, V]) Keep(ctx context.Context, l engine.Lease[K, V]) (context.Context, func() error) {
	kctx, cancel := context.WithCancelCause(callctx.WithFence(ctx, l.Remote.Lease.Fence))
	k := &leaseKeeper{ends: make(chan func()), gone: make(chan struct{})}
	l.Remote.Keeper = k
	s.calls.run(func() {
		defer close(k.gone)
		if err := s.keep(ctx, l.Remote, k.ends, &k.ending); err != nil {
			k.lost.Store(&err)
			cancel(err)
			s.warn("pacer: lease lost, the handler's ctx is cancelled", slog.String("key", l.Remote.Lease.Key), slog.Uint64("fence", l.Remote.Lease.Fence), slog.Any("err", err))
		}
	})
	return kctx, func() error {
		k.ending.Store(true)
		cancel(nil)
		if lost := k.lost.Load(); lost != nil {
			return *lost
		}
		if l.Lapsed(s.clk) {
			return s.lapsed(nil)
		}
		return nil
	}
}

// keep renews r until an end comes, which it runs, and returns nil; or
// until it cannot, and returns why: the store refused a renewal, or r's
// deadline came first. The first renewal comes TTL/3 after the claim (a
// lease that waited for a worker, claimed by an Ack in the background,
// say, is renewed sooner), the next TTL/3 after one succeeded, and TTL/10
// after one failed; none once ending is set.
func (s *Engine[K, V]) keep(ctx context.Context, r *engine.Remote, ends <-chan func(), ending *atomic.Bool) error {
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
			renewal = startCall(&s.calls, ctx, d.At(), func(ctx context.Context) (struct{}, error) {
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
			end()
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
