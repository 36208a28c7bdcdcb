package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.DeadLetters = (*Store)(nil)
)

// A Store keeps the state of pacer Runners in Redis, so that Runners in
// several processes share it: see the package doc for how. Create one
// with New. It is safe for concurrent use.
type Store struct {
	c   redis.UniversalClient
	cfg Config
	id  string // tells this Store's waiters from those of other processes

	queues sync.Map // queue name -> *names

	// ctx ends at Close, which wakes the blocked Waits; waits counts them.
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // orders waits.Add against Close's waits.Wait
	closed bool
	waits  sync.WaitGroup
	seq    atomic.Uint64 // numbers the Waits
}

// New returns a Store that keeps its state through c, configured by cfg.
// The Store does not own c: close c after the Store.
func New(c redis.UniversalClient, cfg Config) (*Store, error) {
	if c == nil {
		return nil, errors.New("redisstore: nil client")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{c: c, cfg: cfg, id: hex.EncodeToString(id[:]), ctx: ctx, cancel: cancel}, nil
}

// Close ends the Waits in progress and makes every later call return
// store.ErrClosed. It leaves the state in Redis and the client open. It is
// safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.waits.Wait()
	return nil
}

// names are the Redis names of a queue's keys.
type names struct {
	prefix string   // "{prefix:queue}:", which every name starts with
	keys   []string // KEYS[1..10] of every script: see lua/lib.lua
}

// key returns the KEYS of a script on key k: the queue's, k's HASH and
// k's LIST.
func (n *names) key(k string) []string {
	keys := make([]string, len(n.keys), len(n.keys)+2)
	copy(keys, n.keys)
	return append(keys, n.prefix+"k:"+k, n.prefix+"v:"+k)
}

// add returns the KEYS of add.lua on key k: k's HASH and LIST, and the
// queue's ready, meta and wake, the keys of its common case.
func (n *names) add(k string) []string {
	return []string{n.prefix + "k:" + k, n.prefix + "v:" + k, n.keys[0], n.keys[6], n.keys[7]}
}

// hash returns the KEYS of a script on the HASH of key k.
func (n *names) hash(k string) []string {
	keys := make([]string, len(n.keys), len(n.keys)+1)
	copy(keys, n.keys)
	return append(keys, n.prefix+"k:"+k)
}

func (n *names) wake() string { return n.keys[7] }

// names returns the names of queue's keys, or an error once the Store is
// closed or if ctx ended.
func (s *Store) names(ctx context.Context, queue string) (*names, error) {
	if s.ctx.Err() != nil {
		return nil, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n, ok := s.queues.Load(queue); ok {
		return n.(*names), nil
	}
	if strings.ContainsAny(queue, "{}") {
		return nil, fmt.Errorf("redisstore: queue name %q has a brace, which would break the hash tag", queue)
	}
	p := "{" + s.cfg.Prefix + ":" + queue + "}:"
	n := &names{prefix: p}
	for _, k := range []string{"ready", "pending", "trailing", "delayed", "leased", "held", "meta", "wake", "dead", "deadat"} {
		n.keys = append(n.keys, p+k)
	}
	v, _ := s.queues.LoadOrStore(queue, n)
	return v.(*names), nil
}

// run runs script with the queue's keys, then keys, and with args after
// the prefix.
func (s *Store) run(ctx context.Context, script *redis.Script, n *names, keys []string, args ...any) *redis.Cmd {
	if keys == nil {
		keys = n.keys
	}
	return script.Run(ctx, s.c, keys, append([]any{n.prefix}, args...)...)
}

// wrap prefixes err with the package name, and with what failed.
func wrap(op string, err error) error {
	return fmt.Errorf("redisstore: %s: %w", op, err)
}
