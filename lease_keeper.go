package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	istore "github.com/pacerkit/pacer/internal/store"
	"github.com/pacerkit/pacer/store"
)

// Keep implements istore.Store: while the Runner works on l, a goroutine
// renews the lease every TTL/3, and stops the work at the lease's
// deadline (istore.Deadline), which only a renewal that succeeded moves.
// The returned ctx carries the lease's fence (see Fence) and is cancelled
// with ErrLeaseLost when the engine refuses a renewal, or at the deadline,
// whatever the renewal in flight does: the handler is stopped before
// another instance can lease the key. The returned function reports the
// loss, also of a lease whose deadline passed while nobody looked.
func (s *sharedStore[K, V]) Keep(ctx context.Context, l istore.Lease[K, V]) (context.Context, func() error) {
	kctx, cancel := context.WithCancelCause(withFence(ctx, l.Remote.Lease.Fence))
	quit, done := make(chan struct{}), make(chan struct{})
	var lost error
	go func() {
		defer close(done)
		lost = s.keep(ctx, l.Remote, quit)
		if lost != nil {
			cancel(lost)
			s.warn("pacer: lease lost, the handler's ctx is cancelled", slog.String("key", l.Remote.Lease.Key), slog.Uint64("fence", l.Remote.Lease.Fence), slog.Any("err", lost))
		}
	}()
	return kctx, func() error {
		close(quit)
		<-done
		cancel(nil)
		if lost == nil && l.Lapsed(s.clk) {
			lost = s.lapsed(nil)
		}
		return lost
	}
}

// keep renews r until quit is closed, and returns why it could not: the
// engine refused a renewal, or r's deadline came first. The first renewal
// comes TTL/3 after the claim (a lease that waited for a worker, claimed
// by an Ack in the background, say, is renewed sooner), the next TTL/3
// after one succeeded, and TTL/10 after one failed.
func (s *sharedStore[K, V]) keep(ctx context.Context, r *istore.Remote, quit <-chan struct{}) error {
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
			if renewal != nil {
				renewal.stop()
				failed = hung(now.Sub(sent), failed)
			}
			return s.lapsed(failed)
		}
		if renewal == nil && !now.Before(next) {
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
		} else if next.Before(wake) {
			wake = next
		}
		t.Reset(wake.Sub(now))
		select {
		case <-quit:
			if renewal != nil {
				renewal.stop()
			}
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
				return ErrLeaseLost
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
func (s *sharedStore[K, V]) lapsed(failed error) error {
	m := istore.Margin(s.ttl)
	err := fmt.Errorf("%w: no renewal succeeded for %v, the LeaseTTL %v less its margin of %v", ErrLeaseLost, s.ttl-m, s.ttl, m)
	if failed != nil {
		return fmt.Errorf("%w: %w", err, failed)
	}
	return err
}
