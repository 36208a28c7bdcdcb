package shared

import (
	"context"
	"log/slog"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
)

// Get implements engine.Engine with one claim loop per Runner, run by
// whichever idle worker holds the leader token: it claims as many keys as
// there are idle workers in one call, keeps one lease and hands the others
// over, and when nothing is ready it blocks in the store's Wait until the
// next key is due or something changes. One caller at a time means one
// round trip for all idle workers and one blocked Wait per Runner, not one
// per worker (a herd that every Add would wake), and no goroutine of its
// own to own and stop: the loop lives in the workers.
func (s *Engine[K, V]) Get(ctx context.Context) (engine.Lease[K, V], error) {
	s.idle.Add(1)
	defer s.idle.Add(-1)
	if s.stop.Err() != nil { // before the select, which picks at random
		s.giveBack(ctx)
		return engine.Lease[K, V]{}, engine.ErrClosed
	}
	select {
	case l := <-s.handoff:
		return s.typed(l), nil
	case s.leader <- struct{}{}:
		l, err := s.lead(ctx)
		<-s.leader
		if err != nil {
			s.giveBack(ctx)
		}
		return l, err
	case <-ctx.Done():
		s.giveBack(ctx)
		return engine.Lease[K, V]{}, ctx.Err()
	case <-s.stop.Done():
		s.giveBack(ctx)
		return engine.Lease[K, V]{}, engine.ErrClosed
	}
}

// lead claims until it has a lease for its caller, ctx ends or the store
// is stopped. Failures of the store are logged and retried after Config.Pause,
// capped at the lease TTL so that the workers resume soon after the store
// does.
func (s *Engine[K, V]) lead(ctx context.Context) (engine.Lease[K, V], error) {
	var zero engine.Lease[K, V]
	select {
	case l := <-s.handoff: // claimed by an earlier leader for a worker that left
		return s.typed(l), nil
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.stop, cancel)()
	failures := 0
	pause := func(op string, err error) {
		failures++
		d := min(s.pause(failures), s.ttl)
		s.warn("pacer: store failed, the workers wait", slog.String("op", op), slog.Int("failures", failures), slog.Duration("for", d), slog.Any("err", err))
		timing.Sleep(s.clk, d, ctx.Done())
	}
	for {
		if ctx.Err() != nil || s.stop.Err() != nil {
			return zero, s.stopped(ctx)
		}
		select {
		case l := <-s.handoff: // handed by an Ack in the background
			return s.typed(l), nil
		default:
		}
		at := s.clk.Now()
		p := store.ClaimParams{Keys: max(int(s.idle.Load()), 1), MaxBatch: s.maxBatch, TTL: s.ttl, Holder: s.holder, PerKey: s.perKey, KeyRate: s.keyRate}
		leases, next, err := s.st.Claim(ctx, s.name, p)
		if err != nil {
			if ctx.Err() == nil {
				pause("claim", err)
			}
			continue
		}
		failures = 0
		if len(leases) > 0 {
			for _, l := range leases[1:] {
				s.hand(ctx, s.claimed(l, at))
			}
			return s.decode(leases[0], at), nil
		}
		if err := s.wait(ctx, next); err != nil && ctx.Err() == nil {
			pause("wait", err)
		}
	}
}

// wait blocks in the store's Wait as the leader does. With Acks in the
// background (ack.go), a lease may be handed over meanwhile: the
// store should hear of the Ack's change and wake the Wait; if it has not
// after handWake (a notification lost, say), wait ends the store's Wait,
// and returns with no error for the leader to take the lease. It does not
// end it at once: ending pgstore's Wait in the middle of its statement, at
// every hand-over, cost a third of the throughput of a busy Runner.
func (s *Engine[K, V]) wait(ctx context.Context, next time.Duration) error {
	if s.acked == nil {
		// What is handed over then goes to a worker about to take it: the
		// one whose Finish claimed it, or the leader's own idle workers.
		return s.st.Wait(ctx, s.name, next)
	}
	select {
	case <-s.handed: // a hand-over that the last Wait, if any, no longer needs
	default:
	}
	if len(s.handoff) > 0 {
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-s.handed:
		case <-stop:
			return
		}
		t := s.clk.NewTimer(handWake)
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-stop:
		}
	}()
	err := s.st.Wait(wctx, s.name, next)
	close(stop)
	<-stopped
	if wctx.Err() != nil && ctx.Err() == nil {
		return nil // ended for a hand-over
	}
	return err
}

// handWake is how long a lease handed over to a leader that waits in the
// store may wait for the store to wake it.
const handWake = 50 * time.Millisecond

// stopped returns why a claim loop under ctx ended.
func (s *Engine[K, V]) stopped(ctx context.Context) error {
	if s.stop.Err() != nil {
		return engine.ErrClosed
	}
	return ctx.Err()
}

// hand gives l, claimed and not decoded yet, to an idle worker. The
// buffer has room for two leases per worker, one claimed by a leader and
// one by an Ack in the background, so it only fills if leases pile up
// unhandled: l then goes back at once.
func (s *Engine[K, V]) hand(ctx context.Context, l engine.Lease[K, V]) {
	select {
	case s.handoff <- l:
		select { // for a leader that waits in the store: see wait
		case s.handed <- struct{}{}:
		default:
		}
	default:
		s.deferNow(ctx, l)
	}
}

// giveBack returns the leases claimed for workers that are not taking
// them, since a worker leaving Get with an error means its crew stops, to
// the store at once and without using an attempt.
func (s *Engine[K, V]) giveBack(ctx context.Context) {
	for {
		select {
		case l := <-s.handoff:
			s.deferNow(ctx, l)
		default:
			return
		}
	}
}

// deferNow gives l back at once, without using an attempt, unless its
// deadline passed: it may be another holder's then.
func (s *Engine[K, V]) deferNow(ctx context.Context, l engine.Lease[K, V]) {
	if l.Lapsed(s.clk) {
		return
	}
	if _, err := s.finish(ctx, l, store.Outcome{Kind: store.Defer}); err != nil {
		s.warn("pacer: could not give a lease back, it will lapse", slog.String("key", l.Remote.Lease.Key), slog.Any("err", err))
	}
}
