package pacer

import (
	"context"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// With Config.AckInBackground, a quick batch's Ack goes on in the
// background, so that its worker takes its next batch while the engine
// commits this one's end. With an engine that ends and claims at once
// (store.FinishClaimer), the Acks of workers that no longer wait for them
// pile up into larger shared calls, and the keys they claim go to
// whichever worker is idle next (hand wakes a leader that waits in the
// engine): a worker of a no-op handler on PostgreSQL otherwise waits for
// a commit of the disk per batch. The batch's key stays leased until the
// engine ended the lease, so its next values wait for that as they did.
//
// Only a quick batch's Ack goes so (claimed less than a tenth of the lease
// TTL ago): a lease claimed by such an Ack may wait for an idle worker,
// which a Runner of quick handlers has soon, and is renewed from its claim
// once taken (lease_keeper.go). The Runner hears of the end later, through
// acked: a failed Ack is logged then, and a key with more values reported
// then (EventRerun). Close waits for the Acks in flight, and gives back
// the leases nobody took.

// Finish implements engine.Engine. A worker that goes back to Get next
// claims its next batch in the same call (finishNext) after an Ack, a
// Drop or a Retry; a quick batch's Ack may go on in the background.
func (s *sharedStore[K, V]) Finish(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
	switch o.Kind {
	case store.Ack:
		if s.ackLater(l) {
			s.acking.Add(1)
			go func() {
				defer s.acking.Done()
				more, err := s.finishNext(ctx, l, o)
				s.acked(l, more, err)
			}()
			return false, nil
		}
		return s.finishNext(ctx, l, o)
	case store.Drop, store.Retry:
		// A Drop is kept by the engine as it was stored, with o.Err, as a
		// dead letter.
		return s.finishNext(ctx, l, o)
	default:
		// A Defer claims nothing: a batch is deferred when it could not
		// run, mostly because the Runner is stopping. Neither does a Hold:
		// holding is rare, and the worker runs OnEvent's EventHeld before
		// it is back in Get.
		return s.finish(ctx, l, o)
	}
}

// ackLater reports whether l's Ack goes on in the background: the Runner
// asks for it (acked is set), the engine ends and claims at once, the
// Runner is not stopping, and the batch was quick.
func (s *sharedStore[K, V]) ackLater(l engine.Lease[K, V]) bool {
	return s.acked != nil && s.fc != nil && s.stop.Err() == nil &&
		l.Remote != nil && s.clk.Now().Sub(l.Remote.Claimed) < s.ttl/10
}
