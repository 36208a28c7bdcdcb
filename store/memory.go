package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
)

var (
	_ Store       = (*Memory)(nil)
	_ DeadLetters = (*Memory)(nil)
	_ Inspector   = (*Memory)(nil)
	_ Operator    = (*Memory)(nil)
)

// MemoryConfig configures a Memory. The zero value is ready to use.
type MemoryConfig struct {
	// Clock is the engine's clock: debounce deadlines, retry delays, lease
	// TTLs and the times of Lease.First and DeadLetter.At are read from it.
	// The default, nil, is clock.New(), the wall clock, which also runs on
	// fake time inside testing/synctest bubbles.
	Clock clock.Clock
}

// Memory is the Store that keeps its state in the process: the reference
// engine, which keeps every guarantee of the package doc for the callers of
// one process. Nothing survives the process, so it offers no durability.
// It also keeps dead letters (DeadLetters), without limit until Purge,
// shows what it holds (Inspector), lets an operator steer it
// (Operator), keeps a rate per key (KeyRateClaimer) and leases in turns
// across tenants (FairTenants): a Claim
// in a queue with tenants costs O(log T) more in its T tenants with
// ready keys, and moves the keys that came due to their tenants' ready
// order at O(log K) each, once.
//
// Memory starts no goroutine and holds no resource beyond memory, so it
// has nothing to close: Wait uses one timer per call. One lock guards all
// of its state; Add, Claim and Finish take logarithmic time (amortized:
// the order of a queue's keys, which the pages of Keys follow, is
// compacted now and then as keys go; with ClaimParams.PerKey, O(PerKey)
// more, and a Finish that removes a batch behind another still out
// O(values behind it)), Stats visits every key of the queue, and so does
// Queues (every key of every queue). A page of Keys takes O(log n +
// Limit) for a queue of n keys, reading at most 2,000 keys (see Keys), Key
// O(MaxAhead) for a ready key (to count KeyInfo.Ahead, plus the entries of
// the schedule before the key that Claims pass over: superseded ones, and
// keys whose lease lapsed with a batch not ready yet; with PerKey, O(PerKey)
// more per key ahead; with tenants, O(log n) per key that came due since
// the last Claim, and for KeyInfo.TenantsAhead O(MaxAhead) plus the
// entries those tenants' Claims pass over before a ready key) and constant
// time otherwise, Values O(limit). The calls of
// Operator take logarithmic time, DropKey O(values) of the key. Values
// are copied in and out, so callers may reuse their buffers.
//
// Memory is safe for concurrent use. The zero value is not usable: create
// one with NewMemory.
type Memory struct {
	clk  timing.Clock
	nano timing.Nanos

	mu     sync.Mutex
	queues map[string]*queue
	fence  uint64 // the last fence handed out, in any queue
	deadID uint64 // the last dead letter's ID, in any queue
}

// queue is the state of one queue name. Records are never removed, so that
// a Wait holding the queue's change channel hears every later change; a
// queue costs little once its keys are gone.
type queue struct {
	keys map[string]*key
	// sched holds, for every key that is not held nor paused and waits for
	// something, the instant of its entry (key.at). Entries are never
	// updated in place: a key pushes a new entry with a new order, and
	// Claim skips those whose order is not the key's.
	sched sched.Heap[slot]
	// created holds the keys in the order their records were created.
	created keyOrder
	dead    []grave // by ID
	// values counts the values of every key, for AddParams.MaxValues.
	values int
	// changed is closed, and cleared, by every change a Wait must hear
	// about; nil while nobody waits.
	changed chan struct{}
	// orders counts the entries pushed into sched (key.order).
	orders uint64
	// paused is set by PauseQueue; pausedKeys holds the keys PauseKey
	// paused, with values or without (see memory_operate.go).
	paused     bool
	pausedKeys map[string]struct{}
	// fair is the turn order across tenants, nil until an Add names a
	// tenant (memory_tenant.go).
	fair *fair
	// tats keeps the KeyRate arrival times of keys that went while their
	// T had not passed (memory_keyrate.go).
	tats tats
}

// slot is an entry of a queue's schedule: k, scheduled as its order-th.
type slot struct {
	k     *key
	order uint64
}

// live reports whether s is k's entry, not a stale one.
func (s slot) live() bool { return s.order == s.k.order }

// NewMemory returns an empty Memory.
func NewMemory(cfg MemoryConfig) *Memory {
	clk := timing.From(cfg.Clock)
	return &Memory{clk: clk, nano: timing.NewNanos(clk), queues: make(map[string]*queue)}
}

// queue returns the record of name, creating it if create is set. It
// returns nil for a queue that never was created.
func (m *Memory) queue(name string, create bool) *queue {
	q := m.queues[name]
	if q == nil && create {
		q = &queue{keys: make(map[string]*key)}
		m.queues[name] = q
	}
	return q
}

// Add implements Store.
func (m *Memory) Add(ctx context.Context, queue, key string, vals [][]byte, p AddParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, true)
	if p.MaxValues > 0 && q.values+len(vals) > p.MaxValues {
		return ErrFull
	}
	m.add(q, key, vals, p, m.nano.Now())
	return nil
}

// validate returns an error naming the field of p that no engine takes.
func (p AddParams) validate() error {
	if p.Wait < 0 || p.MaxWait < 0 || p.MaxValues < 0 {
		return fmt.Errorf("store: AddParams.Wait, MaxWait and MaxValues must be >= 0, got %v, %v and %d", p.Wait, p.MaxWait, p.MaxValues)
	}
	if err := p.ValidateDelay(); err != nil {
		return err
	}
	return ValidateTenant(p)
}

// add appends vals to key in q, as Add and Redrive do.
func (m *Memory) add(q *queue, name string, vals [][]byte, p AddParams, now int64) {
	k := q.keys[name]
	if k == nil {
		k = &key{name: name, tat: q.takeTAT(name, now)}
		q.keys[name] = k
		q.created.add(k)
		if p.Tenant != "" {
			k.tenant = q.tenant(p.Tenant)
		}
	}
	if p.Weight > 0 {
		q.tenant(p.Tenant).weight = p.Weight
	}
	k.add(q, vals, p, now)
	q.values += len(vals)
	q.wake()
}

// Release implements Store.
func (m *Memory) Release(ctx context.Context, queue, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil {
		return false, nil
	}
	k := q.keys[key]
	if k == nil || !k.held {
		return false, nil
	}
	now := m.nano.Now()
	k.settle(now)
	k.release(now)
	k.resched(q, now)
	q.wake()
	return true, nil
}
