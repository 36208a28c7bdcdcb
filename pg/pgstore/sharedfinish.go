package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pacerkit/pacer/store"
)

// Acks share statements and commits. The Acks (a Finish or FinishAndClaim
// with store.Ack) that a Store's callers send at about the same time are
// gathered, by queue and claim parameters, into flights: one caller, the
// leader, ends all of their leases with one statement and claims the keys
// they ask for with a second, sent together in one round trip and run in
// one transaction, so with one commit; then it hands each its own result.
// A group has one flight at a time; the Acks that come meanwhile wait for
// the next, which the first of them leads. No goroutine of the Store's own
// does this: a flight is led by the caller of one of its Acks.
//
// A commit waits for the disk, and one commit for several Acks is what
// lets workers that ack one value at a time go faster than the disk
// commits (see the package doc's figures); fewer, larger statements also
// cost the server less. An Ack that comes to an idle group takes off at
// once; only a flight that shortly follows one of FinishAndClaims may wait
// a little for the workers of the last (gatherFor).
//
// The shared statement never waits for the row lock of a key, so that a
// flight never waits for a transaction of the service's (an AddTx of a
// key whose lease ends) nor can deadlock with one; the slot of the queue's
// count that it writes (see queries.go) only other removals write, and
// for a moment. A lease it did not end, because its key
// row was locked (another process's claim may hold it for a moment) or
// because it does not hold, boards the next flight; if that one does not
// end it either, its caller finishes it alone, with the statements of a
// lone Finish or FinishAndClaim, which wait for the lock and tell a lost
// lease from a locked row.

// maxFlight bounds the Acks of one flight.
const maxFlight = 64

// gatherFor is how long after a flight of FinishAndClaims landed the next
// one may wait to take off, until as many Acks wait as the last one had:
// a worker that got its next batch from a FinishAndClaim comes back with
// its Ack soon if its handler is quick, and a flight that left without it
// would make it wait for a whole flight. A flight waits for no Ack once
// gatherFor passed since the last landing, so an Ack that comes to an idle
// group is sent at once; nor does a flight of Finishes wait, whose callers
// need not come back.
const gatherFor = 500 * time.Microsecond

// maxGroups is how many groups a Store keeps before it forgets the idle
// ones.
const maxGroups = 256

// A sharedAck is an Ack waiting for a flight, or in one.
type sharedAck struct {
	l    store.Lease
	want int           // the keys it claims once l ended: 0 for Finish
	dl   time.Time     // its ctx's deadline, zero if none
	turn chan struct{} // gets a token when its flight landed, or when it is to lead
	lead bool          // set, under the Store's acks lock, before its token says lead

	// Set by its flight before the token.
	ended  bool // its flight ended l or failed; false: finish l alone
	more   bool
	leases []store.Lease
	next   time.Duration
	err    error
}

// ackGroup names the Acks that may share a flight: the claim that follows
// them is one statement, for one queue and one kind of lease, by one
// holder, taking the tenants' turns or not. The Acks of a group with
// perKey > 1 end leases of keys of lanes (lanes.go), with ack_last_lanes_v2,
// and claim with lease_free_lanes_v2 for up to perKey leases of a key.
type ackGroup struct {
	queue    string
	maxBatch int
	ttl      time.Duration
	holder   string
	fair     bool
	perKey   int
	rate     store.KeyRate // of the claim: Acks share a claim only with the same KeyRate
}

// kindOf is the kind of g's claim statement.
func (g ackGroup) kindOf() claimKind {
	if g.fair {
		return fairClaim
	}
	return plainClaim
}

// claims reports whether g's Acks come from FinishAndClaim, which needs a
// TTL, rather than Finish.
func (g ackGroup) claims() bool { return g.ttl > 0 }

// ackQueue is the state of a group: the Acks waiting for the next flight,
// whether one flies, and the last one's size and landing, which the next
// may wait to match (gatherFor).
type ackQueue struct {
	waiting []*sharedAck
	flying  bool
	boarded int // the Acks of the flight that flies
	last    int
	landed  time.Time
	gather  chan struct{} // closed once target Acks wait; nil unless a leader waits
	target  int
}

// ack ends l with an Ack in a flight of its group (see above) and, if
// want > 0, claims up to want keys for it as FinishAndClaim does with p,
// taking the tenants' turns if fair.
// A lease that a flight did not end, because its key row was locked for
// the moment (another process's claim may hold it until its commit) or
// because it does not hold, boards the next flight too, and only then is
// left to its caller. It returns the Ack with its results, and ended false
// if no flight ended l: the caller then finishes l alone.
func (s *Store) ack(ctx context.Context, l store.Lease, want int, p store.ClaimParams, fair bool) *sharedAck {
	a := s.board(ctx, l, want, p, fair)
	if !a.ended {
		a = s.board(ctx, l, want, p, fair)
	}
	return a
}

// board ends l as ack does, in one flight. If ctx ends while the Ack
// waits for the flight, it leaves and returns ctx.Err(); once in the
// flight, it waits for it, and the flight runs until the latest deadline
// of its Acks' ctxs.
func (s *Store) board(ctx context.Context, l store.Lease, want int, p store.ClaimParams, fair bool) *sharedAck {
	a := &sharedAck{l: l, want: want, turn: make(chan struct{}, 1)}
	a.dl, _ = ctx.Deadline()
	g := ackGroup{queue: l.Queue, maxBatch: p.MaxBatch, ttl: p.TTL, holder: p.Holder, fair: fair && want > 0}
	if want > 0 && p.PerKey > 1 {
		g.perKey = p.PerKey
	}
	if want > 0 && p.KeyRate.On() {
		g.rate = p.KeyRate
	}
	s.acks.Lock()
	q := s.ackQueue(g)
	lead := !q.flying
	if lead {
		q.flying = true
	} else {
		q.waiting = append(q.waiting, a)
		if q.gather != nil && len(q.waiting) >= q.target {
			close(q.gather)
			q.gather = nil
		}
	}
	s.acks.Unlock()
	if !lead {
		select {
		case <-a.turn:
		case <-ctx.Done():
			if s.leave(q, a) {
				a.ended, a.err = true, ctx.Err()
				return a
			}
			<-a.turn
		}
		lead = a.lead // written before the token
	}
	if lead {
		s.fly(ctx, g, q, a)
	}
	return a
}

// ackQueue returns the state of group g, made if it is new. The caller
// holds s.acks.
func (s *Store) ackQueue(g ackGroup) *ackQueue {
	q := s.ackQueues[g]
	if q != nil {
		return q
	}
	if len(s.ackQueues) >= maxGroups {
		for k, q := range s.ackQueues {
			if !q.flying && len(q.waiting) == 0 {
				delete(s.ackQueues, k)
			}
		}
	}
	q = &ackQueue{}
	s.ackQueues[g] = q
	return q
}

// leave takes a out of q's waiting Acks, unless a flight took it or it is
// to lead the next; it reports whether it did.
func (s *Store) leave(q *ackQueue, a *sharedAck) bool {
	s.acks.Lock()
	defer s.acks.Unlock()
	for i, w := range q.waiting {
		if w == a {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// fly runs the flight that leader leads, with the Acks waiting in q, and
// then hands the lead to the first Ack that waits, and gives each Ack of
// the flight its result.
func (s *Store) fly(ctx context.Context, g ackGroup, q *ackQueue, leader *sharedAck) {
	s.acks.Lock()
	if wait := time.Until(q.landed.Add(gatherFor)); wait > 0 && g.claims() && len(q.waiting)+1 < q.last {
		q.target = q.last - 1
		gathered := make(chan struct{})
		q.gather = gathered
		s.acks.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-gathered:
		case <-t.C:
		}
		t.Stop()
		s.acks.Lock()
		q.gather = nil
	}
	n := min(len(q.waiting), maxFlight-1)
	flight := make([]*sharedAck, 0, n+1)
	flight = append(append(flight, leader), q.waiting[:n]...)
	q.waiting = append(q.waiting[:0], q.waiting[n:]...)
	q.boarded = len(flight)
	s.acks.Unlock()

	s.runFlight(ctx, g, flight)

	s.acks.Lock()
	q.boarded = 0
	q.last, q.landed = len(flight), time.Now()
	if len(q.waiting) > 0 {
		next := q.waiting[0]
		q.waiting = append(q.waiting[:0], q.waiting[1:]...)
		next.lead = true
		next.turn <- struct{}{}
	} else {
		q.flying = false
	}
	s.acks.Unlock()
	for _, a := range flight[1:] {
		a.turn <- struct{}{}
	}
}

// runFlight ends the leases of flight in one statement and claims the
// keys they want in a second, and sets each Ack's results. The two go in
// one batch, which pgx sends with one Sync, and which PostgreSQL so runs
// as one implicit transaction: one commit, and the second statement sees
// the first's changes and its setting. It runs under ctx without its
// cancellation, until the latest deadline of the flight's Acks.
func (s *Store) runFlight(ctx context.Context, g ackGroup, flight []*sharedAck) {
	ctx, cancel := flightContext(ctx, flight)
	defer cancel()
	type leaseID struct {
		key   string
		fence uint64
	}
	var (
		sent   = make(map[leaseID]bool, len(flight))
		at     []*sharedAck // the Ack of each element of the arrays
		keys   = make([][]byte, 0, len(flight))
		fences = make([]int64, 0, len(flight))
		wants  = make([]int32, 0, len(flight))
		want   int
	)
	for _, a := range flight {
		// The same lease twice (a caller's mistake) goes alone, where the
		// second Finish finds it ended.
		id := leaseID{a.l.Key, a.l.Fence}
		if sent[id] {
			continue
		}
		sent[id] = true
		fence, _ := fenceOf(a.l)
		at, keys, fences, wants = append(at, a), append(keys, bytesOf(a.l.Key)), append(fences, fence), append(wants, int32(a.want))
		want += a.want
	}
	var (
		b      pgx.Batch
		leases []store.Lease
		next   time.Duration
	)
	finishAcks, args := s.q.finishAcks, []any{g.queue, keys, fences, wants}
	switch {
	case g.perKey > 1:
		if g.fair {
			// ack_last_lanes_v2 does not take the lock of the turns, which
			// the claim after it needs: it is taken first, so that no
			// Ack's key row is held while the flight waits for it.
			b.Queue(turnsLockSQL, s.turnsLock(g.queue))
		}
		finishAcks = s.q.finishLanes
	case g.fair:
		// The claim takes the tenants' turns in their order, under the
		// lock of the turns (see turnsLockSQL), which the Acks'
		// statement takes after it has locked their key rows.
		finishAcks, args = s.tq.finishAcks, append(args, s.turnsLock(g.queue))
	}
	b.Queue(finishAcks, args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				i    pgtype.Int8
				more pgtype.Bool
			)
			if err := rows.Scan(&i, &more); err != nil {
				return err
			}
			if i.Valid {
				a := at[i.Int64-1]
				a.ended, a.more = true, more.Bool
			}
		}
		return rows.Err()
	})
	if want > 0 {
		var maxBatch any // NULL: all
		if g.maxBatch > 0 {
			maxBatch = int64(g.maxBatch)
		}
		rated := g.rate.On()
		claimSQL := s.claimSQL(claimForm{keys: want, kind: g.kindOf(), shared: true, rated: rated})
		claimArgs := []any{g.queue, maxBatch, interval(g.ttl), bytesOf(g.holder)}
		if g.perKey > 1 {
			switch {
			case g.fair && rated:
				claimSQL = s.q.claimLanesFairSharedRated
			case g.fair:
				claimSQL = s.q.claimLanesFairShared
			case rated:
				claimSQL = s.q.claimLanesSharedRated
			default:
				claimSQL = s.q.claimLanesShared
			}
			claimArgs = append(claimArgs, g.perKey)
		}
		if rated {
			claimArgs = append(claimArgs, rateArgs(g.rate)...)
		}
		b.Queue(claimSQL, claimArgs...).Query(func(rows pgx.Rows) error {
			var err error
			leases, next, err = scanClaim(g.queue, rows)
			return err
		})
	}
	err := s.sendFlight(ctx, &b)
	woke := false
	for _, a := range flight {
		switch {
		case err != nil:
			// Whether the flight ended a lease, its caller cannot know.
			a.ended, a.err = true, failed(ctx, "Finish", err)
		case a.ended:
			n := min(a.want, len(leases))
			a.leases, leases = leases[:n:n], leases[n:]
			a.next = next
			woke = woke || a.more
		}
	}
	if woke {
		s.notify(g.queue)
	}
}

// sendFlight runs b on a connection of the pool. A connection left inside
// the transaction, by an error, is closed by the pool when released.
func (s *Store) sendFlight(ctx context.Context, b *pgx.Batch) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return conn.SendBatch(ctx, b).Close()
}

// flightContext returns ctx without its cancellation, ending at the
// latest deadline of the flight's Acks, or never if one has none.
func flightContext(ctx context.Context, flight []*sharedAck) (context.Context, context.CancelFunc) {
	var last time.Time
	for _, a := range flight {
		if a.dl.IsZero() {
			return context.WithCancel(context.WithoutCancel(ctx))
		}
		if a.dl.After(last) {
			last = a.dl
		}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), last)
}
