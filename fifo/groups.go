package fifo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/internal/timing"
)

// GroupsConfig configures a Groups.
type GroupsConfig struct {
	// MaxBatch caps the number of messages in one lease. 0, the default,
	// leases all waiting messages of the key at once (coalescing); 1 leases
	// them strictly one by one. Whatever MaxBatch, a retried or deferred
	// lease comes back with exactly its messages. It must be >= 0.
	MaxBatch int

	// PerKey is how many leases of one key may be out at once, each of
	// its own batch; 0 and 1, the default, mean one. With PerKey n > 1
	// the guarantees of a key's one lease hold per batch (see the package
	// doc, "Several leases of a key"); with 0 or 1 Groups costs what it
	// did without the setting. It must be >= 0.
	PerKey int

	// Clock drives Retry and Defer delays. The default is clock.New(), the real
	// clock, which also follows the fake time of testing/synctest bubbles.
	Clock clock.Clock
}

// A Lease is the exclusive right to process the first Messages of a key.
// End it with exactly one of Ack, Drop, Retry, Defer or Hold of the Groups
// that handed it out; ending it twice, or with another Groups, panics. A
// lease cannot be forged: it carries the identity of the key's record in
// the Groups that handed it out, so a copy from another Groups, with the
// same key and lease number, does not match.
type Lease[K comparable, M any] struct {
	// Key is the key the messages were put under.
	Key K
	// Messages are the key's oldest messages, in Put order. Groups never
	// writes to the slice, and appending to it never touches the messages
	// behind it; a lease after Retry or Release shares its elements.
	Messages []M
	// Attempt counts the leases of these head messages: 1 the first time,
	// one more after each Retry; Defer keeps it. Ack, Drop and Release
	// start it over at 1.
	Attempt int

	gr    *group[M] // the key's record in the Groups that handed it out
	token uint64    // identifies the lease among the record's leases
}

// leaseID is the part of a lease that end checks. The methods that end a
// lease pass it on instead of the whole Lease, which with the receiver and
// the other arguments would no longer fit in registers.
type leaseID[K comparable, M any] struct {
	key   K
	gr    *group[M]
	token uint64
}

func (l *Lease[K, M]) id() leaseID[K, M] { return leaseID[K, M]{l.Key, l.gr, l.token} }

// Groups holds messages partitioned by key, keeps them in Put order within
// a key, and hands them out as leases:
//
//   - A key has at most one lease at a time.
//   - The messages of a key are leased in Put order and never skipped
//     except by Drop; a retried or held batch stays at the head of its key,
//     and a retried one is leased again as it was, without the messages
//     put meanwhile, which get a lease and attempts of their own.
//   - Keys are served first-come-first-served by the time their head became
//     ready: when first put, when the lease before it ended with messages
//     behind it, when its retry delay passed, or when released. A key that
//     just ran therefore goes to the tail, behind keys that were waiting.
//
// Groups is safe for concurrent use. The zero value is not usable: create a
// Groups with NewGroups. A delayed Retry or Defer starts one timer
// goroutine; ShutDown, ShutDownWithDrain and a Get that returns
// ErrClosed end it once no delay is pending, and Close always does.
type Groups[K comparable, M any] struct {
	mu       sync.Mutex
	maxBatch int
	perKey   int // GroupsConfig.PerKey; > 1 takes the paths of groups_perkey.go
	groups   map[K]*group[M]
	free     []*group[M] // recycled group records
	ready    ring[readyKey[K, M]]
	fair     *fairReady[K, M] // the ready order with tenants, instead of ready
	tenantOf func(K) string
	weightOf func(string) int
	waiters  waitList
	delay    delayer[K]
	waiting  int // messages not leased
	stored   int // messages, leased ones included
	leases   int
	delayed  int // keys in stateDelayed
	retrying int // keys in stateDelayed after a Retry
	behind   int // messages behind the retried leases of those keys
	held     int // keys in stateHeld
	stale    int // entries of the ready order left behind by a key that left it (PerKey > 1)
	heldMsgs int // messages of held keys
	token    uint64
	shut     bool
	drained  chan struct{}
	drainEnd bool
	cut      chan struct{} // closed by ShutDown to end the pending ShutDownWithDrain calls
	closed   bool
	left     func(key K, msgs []M) // Close's callback, for leases ended after it
}

// readyKey is an entry of the ready order. It carries the group so that
// Get needs no map lookup; a ready group stays in the map until its lease
// ends, so the pointer is current.
type readyKey[K comparable, M any] struct {
	key K
	gr  *group[M]
}

// group is the state of one key that has messages or a lease.
type group[M any] struct {
	msgs []M // head first
	// head is the size of the head batch: the messages out on the lease
	// in stateLeased; after a Retry or Defer, those of the lease, which
	// the next lease takes again as they are; else 0, and the next lease
	// takes what MaxBatch allows.
	head    int
	attempt int
	token   uint64
	due     int64 // retry deadline, in stateDelayed
	state   groupState
	retry   bool   // in stateDelayed after a Retry, not a Defer
	tenant  string // with tenants: the key's, from its first message

	// With PerKey > 1 the key's batches are runs instead of head, and its
	// Attempt and lease tokens are theirs (groups_perkey.go).
	runs   []run
	leased int // runs out on a lease
	skip   int // stale entries of the key in the ready order, ahead of its live one
}

type groupState uint8

const (
	stateReady   groupState = iota // in the ready order
	stateLeased                    // out on a lease
	stateDelayed                   // waiting for its Retry or Defer delay
	stateHeld                      // held until Release
)

// NewGroups returns an empty Groups. It starts no goroutine until the first
// Retry or Defer with a positive delay. It returns an error if cfg.MaxBatch < 0.
func NewGroups[K comparable, M any](cfg GroupsConfig) (*Groups[K, M], error) {
	if cfg.MaxBatch < 0 {
		return nil, fmt.Errorf("fifo: GroupsConfig.MaxBatch must be >= 0, got %d", cfg.MaxBatch)
	}
	if cfg.PerKey < 0 {
		return nil, fmt.Errorf("fifo: GroupsConfig.PerKey must be >= 0, got %d", cfg.PerKey)
	}
	g := &Groups[K, M]{
		maxBatch: cfg.MaxBatch,
		perKey:   cfg.PerKey,
		groups:   make(map[K]*group[M]),
		delay:    newDelayer[K](timing.From(cfg.Clock)),
	}
	return g, nil
}

// Put appends msgs to key, behind its earlier messages. A key that had no
// messages becomes ready at the tail; a leased, delayed or held key keeps
// its place and state. Put with no messages does nothing. Put returns
// ErrClosed after shutdown.
func (g *Groups[K, M]) Put(key K, msgs ...M) error {
	var tn string
	w := 0
	if g.tenantOf != nil && len(msgs) > 0 {
		tn = g.tenantOf(key)
		if g.weightOf != nil {
			w = max(g.weightOf(tn), 1)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return ErrClosed
	}
	if len(msgs) == 0 {
		return nil
	}
	if w > 0 {
		g.fair.tenant(tn, w)
	}
	gr := g.groups[key]
	if gr == nil {
		gr = g.newGroup()
		gr.tenant = tn
		g.groups[key] = gr
		g.makeReady(key, gr)
	} else if gr.state == stateHeld {
		g.heldMsgs += len(msgs)
	} else if gr.retry {
		g.behind += len(msgs)
	}
	gr.msgs = append(gr.msgs, msgs...)
	g.waiting += len(msgs)
	g.stored += len(msgs)
	if g.perKey > 1 && gr.state == stateLeased {
		g.reconsider(key, gr) // it may take another lease now
	}
	return nil
}

func (g *Groups[K, M]) newGroup() *group[M] {
	if n := len(g.free); n > 0 {
		gr := g.free[n-1]
		g.free = g.free[:n-1]
		return gr
	}
	return &group[M]{attempt: 1}
}

func (g *Groups[K, M]) makeReady(key K, gr *group[M]) {
	gr.state = stateReady
	g.pushReady(key, gr)
	g.waiters.wakeOne()
}

// Get leases the head messages of the first ready key: all its messages, or
// at most MaxBatch. The caller must end the lease with Ack, Drop, Retry,
// Defer or Hold. Get blocks while no key is ready. Once Groups is shut down,
// Get still hands out keys that are or become ready, waiting for pending
// delays, and returns ErrClosed when no key is ready or delayed. If ctx
// ends first, Get returns ctx.Err() and nothing changes.
func (g *Groups[K, M]) Get(ctx context.Context) (Lease[K, M], error) {
	done := ctx.Done()
	if done != nil {
		select {
		case <-done:
			return Lease[K, M]{}, ctx.Err()
		default:
		}
	}
	g.mu.Lock()
	for {
		if r, ok := g.popReady(); ok {
			key, gr := r.key, r.gr
			if g.perKey > 1 {
				l := g.leaseRun(key, gr)
				g.mu.Unlock()
				return l, nil
			}
			n := gr.head
			if n == 0 {
				n = len(gr.msgs)
				if g.maxBatch > 0 && n > g.maxBatch {
					n = g.maxBatch
				}
			}
			g.token++
			gr.state, gr.head, gr.token = stateLeased, n, g.token
			g.waiting -= n
			g.leases++
			l := Lease[K, M]{Key: key, Messages: gr.msgs[:n:n], Attempt: gr.attempt, gr: gr, token: gr.token}
			g.mu.Unlock()
			return l, nil
		}
		if g.shut && g.delayed == 0 {
			loop := g.idleLoop()
			g.mu.Unlock()
			if loop != nil {
				loop.Stop()
			}
			return Lease[K, M]{}, ErrClosed
		}
		if !g.waiters.wait(&g.mu, done) {
			g.mu.Unlock()
			return Lease[K, M]{}, ctx.Err()
		}
	}
}

// end checks that l is the key's current lease and ends it. It panics, with
// the lock released, on a lease that already ended, never was, or belongs
// to another Groups: records are never shared between Groups, so comparing
// the record catches a lease of another Groups whose key and token match.
// The map lookup by the lease's Key, not its record alone, also catches an
// edited Key.
func (g *Groups[K, M]) end(l leaseID[K, M], op string) *group[M] {
	gr := g.groups[l.key]
	if gr == nil || gr != l.gr || gr.state != stateLeased || gr.token != l.token {
		g.mu.Unlock()
		panic(fmt.Sprintf("fifo: Groups.%s of a lease that is not current (already ended, or not handed out by this Groups)", op))
	}
	g.leases--
	return gr
}

// Ack ends the lease and removes its messages. If more messages wait behind
// them, the key becomes ready again, at the tail, and Ack reports more.
// Ack panics if l is not the key's current lease in this Groups.
func (g *Groups[K, M]) Ack(l Lease[K, M]) (more bool) {
	return g.remove(l.id(), "Ack")
}

// Drop ends the lease and gives up on its messages: they are removed as by
// Ack, the messages behind them proceed, and Drop reports more as Ack does.
// Use it when the head cannot succeed (dead-letter it first if needed).
// Drop panics if l is not the key's current lease in this Groups.
func (g *Groups[K, M]) Drop(l Lease[K, M]) (more bool) {
	return g.remove(l.id(), "Drop")
}

func (g *Groups[K, M]) remove(l leaseID[K, M], op string) (more bool) {
	g.mu.Lock()
	if g.perKey > 1 {
		return g.removeRun(l, op)
	}
	gr := g.end(l, op)
	// The leased messages stay in the lease's slice; never write over
	// them, so reslice instead of shifting.
	gr.msgs = gr.msgs[gr.head:]
	g.stored -= gr.head
	gr.head = 0
	gr.attempt = 1
	switch {
	case len(gr.msgs) == 0:
		g.forget(l.key, gr)
	case g.closed:
		g.handBack(l.key, gr)
		return false
	default:
		g.makeReady(l.key, gr)
		more = true
	}
	g.checkDrained()
	g.mu.Unlock()
	return more
}

// forget deletes a key that has no lease and whose messages are gone or
// taken, and recycles its record.
func (g *Groups[K, M]) forget(key K, gr *group[M]) {
	delete(g.groups, key)
	gr.msgs, gr.head, gr.attempt, gr.retry, gr.tenant = nil, 0, 1, false, ""
	gr.runs, gr.leased, gr.skip = gr.runs[:0], 0, 0
	if len(g.free) < 1024 {
		g.free = append(g.free, gr)
	}
}

// handBack, once Groups is closed, takes the messages of a key whose lease
// just ended, releases the lock and hands them to Close's callback.
func (g *Groups[K, M]) handBack(key K, gr *group[M]) {
	msgs := gr.msgs
	g.waiting -= len(msgs)
	g.stored -= len(msgs)
	g.forget(key, gr)
	g.checkDrained() // the lease that just ended may have been the last
	left := g.left
	g.mu.Unlock()
	g.giveBack(left, key, msgs)
}

// giveBack hands msgs to left in batches of at most MaxBatch, as leases
// would have carried them.
func (g *Groups[K, M]) giveBack(left func(key K, msgs []M), key K, msgs []M) {
	if left == nil {
		return
	}
	for len(msgs) > 0 {
		n := len(msgs)
		if g.maxBatch > 0 && n > g.maxBatch {
			n = g.maxBatch
		}
		left(key, msgs[:n:n])
		msgs = msgs[n:]
	}
}

// Retry ends the lease and keeps its messages at the head of the key. The
// key is unavailable for after, then becomes ready at the tail; the next
// lease has exactly the same messages and Attempt one higher. Messages put
// meanwhile wait behind them and form the lease after, at Attempt 1, so
// that each message gets its full attempts. An after too long for the
// clock to add, up to math.MaxInt64, never comes due. Delays keep running
// after ShutDown. Retry panics if l is not the key's current lease in this
// Groups.
func (g *Groups[K, M]) Retry(l Lease[K, M], after time.Duration) {
	g.again(l.id(), after, "Retry", 1)
}

// Defer ends the lease like Retry, but the next lease keeps the same
// Attempt: use it when the messages were not handled or were cut short
// through no fault of their own (a closed window, a shutdown). Defer panics
// if l is not the key's current lease in this Groups.
func (g *Groups[K, M]) Defer(l Lease[K, M], after time.Duration) {
	g.again(l.id(), after, "Defer", 0)
}

func (g *Groups[K, M]) again(l leaseID[K, M], after time.Duration, op string, tries int) {
	g.mu.Lock()
	if g.perKey > 1 {
		g.againRun(l, after, op, tries)
		return
	}
	gr := g.end(l, op)
	// gr.head stays: the next lease is this one again, and messages put
	// meanwhile wait behind it for a lease, and attempts, of their own.
	g.keep(gr)
	gr.attempt += tries
	if g.closed {
		g.handBack(l.key, gr)
		return
	}
	if after <= 0 {
		g.makeReady(l.key, gr)
	} else {
		gr.state = stateDelayed
		gr.due = g.delay.deadline(after)
		g.delayed++
		if tries > 0 {
			gr.retry = true
			g.retrying++
			g.behind += len(gr.msgs) - gr.head
		}
		g.delay.push(l.key, gr.due, g.fire)
	}
	g.checkDrained()
	g.mu.Unlock()
}

// keep puts a lease's messages back among the waiting ones.
func (g *Groups[K, M]) keep(gr *group[M]) {
	g.waiting += gr.head
}

// fire runs on the timer goroutine and readies the keys whose delay is
// over.
func (g *Groups[K, M]) fire(now time.Time) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next, ok := g.delay.due(now, func(key K, at int64) {
		gr := g.groups[key]
		if gr == nil || gr.state != stateDelayed || gr.due != at {
			return
		}
		if g.perKey > 1 {
			g.runDue(key, gr)
			return
		}
		g.delayed--
		if gr.retry {
			gr.retry = false
			g.retrying--
			g.behind -= len(gr.msgs) - gr.head
		}
		g.makeReady(key, gr)
	})
	if g.shut && g.delayed == 0 {
		// Gets waiting for the last delay return ErrClosed if another
		// took the key.
		g.waiters.wakeAll()
	}
	return next, ok
}

// Hold ends the lease, keeps its messages at the head of the key and takes
// the key out of rotation until Release: its later messages wait too. This
// is the strict policy for a head that exhausted its retries, beside Drop.
// Hold panics if l is not the key's current lease in this Groups.
func (g *Groups[K, M]) Hold(l Lease[K, M]) {
	g.mu.Lock()
	if g.perKey > 1 {
		g.holdRun(l.id())
		return
	}
	gr := g.end(l.id(), "Hold")
	g.keep(gr)
	if g.closed {
		g.handBack(l.Key, gr)
		return
	}
	gr.state = stateHeld
	g.held++
	g.heldMsgs += len(gr.msgs)
	g.checkDrained()
	g.mu.Unlock()
}

// Release returns a held key to the ready order, at the tail, with its
// Attempt count started over: its next lease takes the held messages and,
// up to MaxBatch, those put behind them. It reports whether key was held.
// It works after ShutDown too: Get then hands the key out as long as it is
// ready.
func (g *Groups[K, M]) Release(key K) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr := g.groups[key]
	if gr == nil || gr.state != stateHeld {
		return false
	}
	if g.perKey > 1 {
		g.releaseRuns(key, gr)
		return true
	}
	gr.attempt, gr.head = 1, 0
	g.held--
	g.heldMsgs -= len(gr.msgs)
	g.makeReady(key, gr)
	return true
}

// Held returns the held keys, in no particular order.
func (g *Groups[K, M]) Held() []K {
	g.mu.Lock()
	defer g.mu.Unlock()
	var keys []K
	for key, gr := range g.groups {
		if gr.state == stateHeld {
			keys = append(keys, key)
		}
	}
	return keys
}
