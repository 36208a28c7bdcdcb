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
// renews the lease every TTL/3. The returned ctx carries the lease's fence
// (see Fence) and is cancelled with ErrLeaseLost when the engine refuses a
// renewal, or when renewals keep failing and the next one would come after
// the lease lapsed: the handler is stopped before another instance can
// lease the key, as far as the clocks agree.
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
		return lost
	}
}

// keep renews r until quit is closed, and returns why it could not.
func (s *sharedStore[K, V]) keep(ctx context.Context, r *istore.Remote, quit <-chan struct{}) error {
	every := s.ttl / 3
	renewed := r.Claimed // the lease lasts s.ttl from here at least
	// Counted from the claim: a lease that waited for a worker (claimed by
	// an Ack in the background, say) is renewed sooner.
	t := s.clk.NewTimer(max(every-s.clk.Now().Sub(renewed), 0))
	defer t.Stop()
	for {
		select {
		case <-quit:
			return nil
		case <-t.C():
		}
		at := s.clk.Now()
		err := s.extend(ctx, r.Lease, every)
		switch {
		case err == nil:
			renewed = at
		case errors.Is(err, store.ErrLeaseLost):
			return ErrLeaseLost
		case at.Add(every).Sub(renewed) >= s.ttl:
			return fmt.Errorf("%w: renewal failed for %v of a %v TTL: %w", ErrLeaseLost, at.Sub(renewed), s.ttl, err)
		default:
			s.warn("pacer: lease renewal failed, will try again", slog.String("key", r.Lease.Key), slog.Any("err", err))
		}
		t.Reset(every)
	}
}

// extend renews l for the TTL; the call gets no longer than the time to
// the next renewal, and outlives the cancellation of the handler, which
// may take a while to return.
func (s *sharedStore[K, V]) extend(ctx context.Context, l store.Lease, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	return s.st.Extend(ctx, l, s.ttl)
}
