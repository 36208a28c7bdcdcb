package shared

import (
	"context"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// With Config.AckInBackground, a quick batch's Ack goes on in the
// background, so that its worker takes its next batch while the store
// commits this one's end. With a store that ends and claims at once
// (store.FinishClaimer), the Acks of workers that no longer wait for them
// pile up into larger shared calls, and the keys they claim go to
// whichever worker is idle next (hand wakes a leader that waits in the
// store): a worker of a no-op handler on PostgreSQL otherwise waits for
// a commit of the disk per batch. The batch's key stays leased until the
// store ended the lease, so its next values wait for that as they did.
//
// Only a quick batch's Ack goes so (claimed less than a tenth of the lease
// TTL ago): a lease claimed by such an Ack may wait for an idle worker,
// which a Runner of quick handlers has soon, and is renewed from its claim
// once taken (keeper.go). The Runner hears of the end later, through
// Config.Acked: a failed Ack is logged then, and a key with more values
// reported then (EventRerun). Close waits for the Acks in flight, and
// gives back the leases nobody took.

// ackInBackground acks l as Finish would, on the lease's keeper, and
// reports the end to Config.Acked; Close waits for it. No goroutine waits
// for the call: the keeper reports its answer, or a timer that the store
// did not answer in time (see callThen).
func (s *Engine[K, V]) ackInBackground(ctx context.Context, l engine.Lease[K, V], o store.Outcome) {
	s.acking.Add(1)
	if ctx.Err() != nil || l.Remote.Keeper == nil || l.Lapsed(s.clk) {
		go s.ackNow(ctx, l, o)
		return
	}
	e := s.newEnd(ctx, l, o, true, s.clk.Now())
	callThen(s.calls, l.Remote.Keeper, &e.storeCall)
}

// ackNow acks l as Finish would, but for Acked. A method of its own: a
// closure in ackInBackground would move its arguments to the heap at
// each call.
func (s *Engine[K, V]) ackNow(ctx context.Context, l engine.Lease[K, V], o store.Outcome) {
	defer s.acking.Done()
	more, err := s.finishNext(ctx, l, o)
	s.acked(l, more, err)
}

// ackLater reports whether l's Ack goes on in the background: the Runner
// asks for it (acked is set), the store ends and claims at once, the
// Runner is not stopping, and the batch was quick.
func (s *Engine[K, V]) ackLater(l engine.Lease[K, V]) bool {
	return s.acked != nil && s.fc != nil && s.stop.Err() == nil &&
		l.Remote != nil && s.clk.Now().Sub(l.Remote.Claimed) < s.ttl/10
}
