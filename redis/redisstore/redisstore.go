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

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.DeadLetters = (*Store)(nil)
	_ store.Inspector   = (*Store)(nil)
)

// A Store keeps the state of pacer Runners in Redis, so that Runners in
// several processes share it: see the package doc for how. Create one
// with New. It is safe for concurrent use.
type Store struct {
	c        redis.UniversalClient
	cfg      Config
	id       string     // tells this Store's waiters from those of other processes
	registry string     // the SET of the queues' names (see queues.go)
	scanMu   sync.Mutex // held by the scan that completes the registry

	queues sync.Map // queue name -> *queue

	// ctx ends at Close, which wakes the blocked Waits; waits counts the
	// Waits' blocking pops, which may outlive their Wait a little.
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // orders waits.Add against Close's waits.Wait
	closed bool
	waits  sync.WaitGroup
	seq    atomic.Uint64 // numbers the Waits
}

// New returns a Store that keeps its state through c, configured by cfg,
// once it made sure, within ctx, that c's server can hold it: that it
// answers, is Redis 7.0 or later, and lets c's user load and call the
// package's functions, which it loads. Otherwise, or if cfg is not valid,
// it returns an error that names the server's address, or the field, and
// what is wrong. The Store does not own c: close c after the Store.
func New(ctx context.Context, c redis.UniversalClient, cfg Config) (*Store, error) {
	if c == nil {
		return nil, errors.New("redisstore: nil client")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := lib.Check(ctx, c); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	life, cancel := context.WithCancel(context.Background())
	s := &Store{c: c, cfg: cfg, id: hex.EncodeToString(id[:]), registry: registryName(cfg.Prefix), ctx: life, cancel: cancel}
	return s, nil
}

// Close ends the Waits in progress, waits for their blocking pops to end,
// and makes every later call return store.ErrClosed. It leaves the state
// in Redis and the client open. It is safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.waits.Wait()
	return nil
}

// A queue is what a Store keeps for one queue name: the Redis names of
// its keys, and the Finish calls it combines (see finish.go).
type queue struct {
	name   string
	prefix string   // "{Prefix:queue}:" in the name encoding, which every name starts with
	ready  []string // KEYS of the scripts on the whole queue
	dead   []string // KEYS of the dead-letter scripts
	add    []string // KEYS of add.lua: the inbox, the wake and the meta
	keys   []string // KEYS of the scripts that page through the keys
	wake   string

	paused     []string // KEYS of the script that pauses the queue: its flag
	pausedKeys []string // KEYS of the scripts that pause keys: the set of paused keys

	finishes combiner

	// listed is set once this process put the queue's name in the
	// Store's registry (see queues.go).
	listed atomic.Bool
}

// hash returns the KEYS of a script on key k: k's HASH.
func (q *queue) hash(k string) []string { return []string{q.prefix + "k:" + k} }

// values returns the KEYS of a script on the values of key k: k's LIST.
func (q *queue) values(k string) []string { return []string{q.prefix + "v:" + k} }

// queue returns the state of the queue named name, or an error once the
// Store is closed or if ctx ended.
func (s *Store) queue(ctx context.Context, name string) (*queue, error) {
	if s.ctx.Err() != nil {
		return nil, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q, ok := s.queues.Load(name); ok {
		return q.(*queue), nil
	}
	if strings.ContainsAny(name, "{}") {
		return nil, fmt.Errorf("redisstore: queue name %q has a brace, which would break the hash tag", name)
	}
	v, _ := s.queues.LoadOrStore(name, newQueue(s.cfg.Prefix, name))
	return v.(*queue), nil
}

// newQueue returns the queue named name of the Store of prefix, its names
// in the name encoding (see the package doc).
func newQueue(prefix, name string) *queue {
	p := redisname.KeyPrefix(prefix, name)
	return &queue{
		name:   name,
		prefix: p,
		ready:  []string{p + "ready"},
		dead:   []string{p + "dead"},
		add:    []string{p + "inbox", p + "wake", p + "meta"},
		keys:   []string{p + "keys"},
		wake:   p + "wake",

		paused:     []string{p + "paused"},
		pausedKeys: []string{p + "pausedkeys"},
	}
}

// folding is the reply of a script that found Adds left to fold in the
// queue's inbox before it could do its work: it is run again.
const folding = "FOLDING"

// run calls the function fn with keys and args, again while it replies
// folding. Each call folds part of the inbox, so the calls end.
func (s *Store) run(ctx context.Context, fn string, keys []string, args ...any) *redis.Cmd {
	for {
		cmd := s.call(ctx, fn, keys, args...)
		if v, ok := cmd.Val().(string); !ok || v != folding {
			return cmd
		}
	}
}

// runCommand is run for a whole FCALL command built ahead (see
// redisfn.Library.Do).
func (s *Store) runCommand(ctx context.Context, cmd []any) *redis.Cmd {
	for {
		r := lib.Do(ctx, s.c, cmd...)
		if v, ok := r.Val().(string); !ok || v != folding {
			return r
		}
	}
}

// wrap prefixes err with the package name, and with what failed.
func wrap(op string, err error) error {
	return fmt.Errorf("redisstore: %s: %w", op, err)
}
