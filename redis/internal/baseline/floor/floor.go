// Package floor is the least a Redis store can do to give pacer's strict
// guarantees, as a measure of what pacer's redisstore costs above it: one
// value of a key at a time, in Add order, under a lease of the key that a
// fence and an expiry guard, each value stored before Add returns, and
// nothing else (no batches, retries, delays, dead letters, pauses, rates,
// tenants, inspection, renewal or rolling upgrades). One function call of
// floor.lua ends several workers' leases and claims their next ones:
// the calls that come while a queue's call is on its way to Redis wait for
// it and share the next, as redisstore's finish scripts do.
package floor

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed floor.lua
var library string

// maxCombined bounds the calls one function call serves, as redisstore's.
const maxCombined = 64

// A Layout is where a Store keeps the state of a key's lease.
type Layout int

const (
	// LeaseMember keeps a lease as a member "fence:key" of the queue's
	// leases ZSET, by its expiry: one ZSCORE checks its fence and expiry.
	LeaseMember Layout = iota
	// KeyHash keeps a key's state in a hash of its own, read and written
	// as redisstore's strict path does (see floor.lua): the floor with
	// redisstore's layout, to tell the layout's cost from the rest.
	KeyHash
	// KeyHashLean keeps a key's state in a hash of its own with the
	// fields this path needs alone, read and written as little as it
	// needs (see floor.lua): what KeyHash's cost is made of.
	KeyHashLean
)

// A Store is one queue of the floor's on a Redis client.
type Store struct {
	c                                    *redis.Client
	layout                               Layout
	ready, leases, fences, lists, hashes string
	ttl                                  string // microseconds
	mu                                   sync.Mutex
	busy                                 bool    // a call is on its way
	waiting                              []*call // in the order they came
}

// A Lease is a key's lease and the value it leases.
type Lease struct {
	Key   string
	Fence int64
	Value string
}

// New loads floor.lua into c's server and returns queue's Store, whose
// leases last ttl, kept as layout says.
func New(ctx context.Context, c *redis.Client, queue string, ttl time.Duration, layout Layout) (*Store, error) {
	if err := c.FunctionLoadReplace(ctx, library).Err(); err != nil {
		return nil, fmt.Errorf("floor: load: %w", err)
	}
	tag := "{" + queue + "}"
	return &Store{c: c, layout: layout, ready: tag + ":ready", leases: tag + ":leases", fences: tag + ":fences",
		lists: tag + ":v:", hashes: tag + ":k:", ttl: strconv.FormatInt(ttl.Microseconds(), 10)}, nil
}

// Add appends value to key's values; they are stored once it returns.
func (s *Store) Add(ctx context.Context, key, value string) error {
	if s.layout != LeaseMember {
		return s.c.FCall(ctx, "floor_add_keyhash", []string{s.ready}, s.lists, key, value, s.hashes).Err()
	}
	return s.c.FCall(ctx, "floor_add", []string{s.ready}, s.lists, key, value).Err()
}

// Ready returns how many keys wait for a lease, and Leased how many
// leases are held: both 0 once every value has been handled.
func (s *Store) Ready(ctx context.Context) (int64, error) { return s.c.ZCard(ctx, s.ready).Result() }

// Leased returns how many leases are held.
func (s *Store) Leased(ctx context.Context) (int64, error) { return s.c.ZCard(ctx, s.leases).Result() }

// A call is one Step, and its results once done is signalled.
type call struct {
	end  *Lease // nil: none to end
	want int
	done chan struct{}
	lead bool // done signalled to have the call send the next function call

	lost  bool
	taken []Lease
	err   error
}

// ErrLeaseLost is Step's error for a lease that lapsed or was superseded.
var ErrLeaseLost = errors.New("floor: lease lost")

// Step ends l, if not nil (its value leaves its key; the key is ready
// again if it has more), then leases up to want ready keys, and returns
// their leases. Calls that come while another's function call is on its
// way wait and share the next, which runs under the ctx of the call that
// sends it (a measurement's store: no call leaves a batch it joined).
func (s *Store) Step(ctx context.Context, l *Lease, want int) ([]Lease, error) {
	c := &call{end: l, want: want, done: make(chan struct{}, 1)}
	s.do(ctx, c)
	if c.err == nil && c.lost {
		c.err = ErrLeaseLost
	}
	return c.taken, c.err
}

// do runs c in a function call of a batch of calls, as redisstore's
// combiner does: the call that finds none on its way sends one, after
// yielding its processor once so that the goroutines ready to run join
// it; when it is back, it hands the waiting calls to the first of them.
func (s *Store) do(ctx context.Context, c *call) {
	s.mu.Lock()
	s.waiting = append(s.waiting, c)
	if s.busy {
		s.mu.Unlock()
		<-c.done
		if !c.lead {
			return
		}
		s.mu.Lock()
	}
	s.busy = true
	s.mu.Unlock()
	runtime.Gosched()
	s.mu.Lock()
	n := min(len(s.waiting), maxCombined)
	batch := append([]*call(nil), s.waiting[:n]...)
	s.waiting = append(s.waiting[:0], s.waiting[n:]...)
	s.mu.Unlock()
	s.send(ctx, batch)
	for _, b := range batch {
		if b != c {
			b.done <- struct{}{}
		}
	}
	s.mu.Lock()
	if len(s.waiting) == 0 {
		s.busy = false
		s.mu.Unlock()
		return
	}
	next := s.waiting[0]
	next.lead = true
	s.mu.Unlock()
	next.done <- struct{}{}
}

// send runs floor_step for batch and sets each call's results.
func (s *Store) send(ctx context.Context, batch []*call) {
	ends, want := 0, 0
	for _, c := range batch {
		if c.end != nil {
			ends++
		}
		want += c.want
	}
	cmd := make([]any, 0, 11+2*ends)
	switch s.layout {
	case KeyHash:
		cmd = append(cmd, "fcall", "floor_step_keyhash", 3, s.ready, s.leases, s.fences, s.lists, s.ttl, ends, s.hashes)
	case KeyHashLean:
		cmd = append(cmd, "fcall", "floor_step_keyhash_lean", 3, s.ready, s.leases, s.fences, s.lists, s.ttl, ends, s.hashes)
	default:
		cmd = append(cmd, "fcall", "floor_step", 3, s.ready, s.leases, s.fences, s.lists, s.ttl, ends)
	}
	for _, c := range batch {
		if c.end != nil {
			cmd = append(cmd, c.end.Key, c.end.Fence)
		}
	}
	cmd = append(cmd, want)
	r, err := s.c.Do(ctx, cmd...).Slice()
	if err == nil && (len(r) < ends || (len(r)-ends)%3 != 0) {
		err = fmt.Errorf("floor: reply of %d for %d ends", len(r), ends)
	}
	if err != nil {
		for _, c := range batch {
			c.err = err
		}
		return
	}
	i, taken := 0, r[ends:]
	for _, c := range batch {
		if c.end != nil {
			c.lost = r[i] != int64(1)
			i++
		}
		for ; c.want > len(c.taken) && len(taken) > 0; taken = taken[3:] {
			key, _ := taken[0].(string)
			fence, _ := taken[1].(int64)
			value, _ := taken[2].(string)
			c.taken = append(c.taken, Lease{Key: key, Fence: fence, Value: value})
		}
	}
}
