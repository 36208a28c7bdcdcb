package redisstore

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/store"
)

// The registry is a SET of the names of a Store's queues, "{Prefix}:queues"
// in the name encoding: a name of one part, so no queue's, whose names
// have two. It lives in a slot of its own, which a queue's functions
// cannot write on Redis Cluster, so the Go code writes it: a process puts
// a queue's name there, in a command of its own, before its first Add or
// Redrive of that queue (every value and dead letter of a queue came from
// one), and never again.
//
// A queue that got its values from a process that did not do so (a
// version of this package without the registry), or whose name the
// registry lost (a restart of a server without persistence forgets the
// registry with the values, but a process goes on adding to the queue
// that it listed before), is found by a scan: the registry holds the
// member listedAll once a scan of the server's keys listed every queue
// that has a meta hash (every queue that ever held a value has one), and
// Queues scans, in bounded steps, when that member is missing.
const listedAll = "{all}" // no queue's name: a name has no brace

// registryName returns the name of the registry of the Store of prefix.
func registryName(prefix string) string { return redisname.KeyPrefix(prefix) + "queues" }

// list puts q's name in the registry, unless this process did so before,
// for the operation op, whose error it is if it fails.
func (s *Store) list(ctx context.Context, q *queue, op string) error {
	if q.listed.Load() {
		return nil
	}
	if err := s.c.SAdd(ctx, s.registry, q.name).Err(); err != nil {
		return wrap(op, err)
	}
	q.listed.Store(true)
	return nil
}

// oldestAmong is how many keys, first in the ready order, Queues looks
// at for QueueInfo.Oldest: the one a Claim leases next.
const oldestAmong = 1

// Queues returns the queues of the Store's Prefix that hold values or
// dead letters, with their counts, ordered by name; see store.Inspector.
// It reads the registry, then runs Stats' function on each queue listed,
// which also reads the first value of the key at the front of the ready
// order. It costs O(queues) commands, each of Stats' cost, and the first
// time after the registry lost its listedAll, a scan of the server's keys
// too.
func (s *Store) Queues(ctx context.Context) ([]store.QueueInfo, error) {
	if s.ctx.Err() != nil {
		return nil, store.ErrClosed
	}
	names, err := s.queueNames(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.QueueInfo
	for _, name := range names {
		q, err := s.queue(ctx, name)
		if err != nil {
			return nil, err
		}
		st, oldest, err := s.stats(ctx, q, oldestAmong)
		if err != nil {
			return nil, err
		}
		if st.Values > 0 || st.Dead > 0 {
			out = append(out, store.QueueInfo{Name: name, Stats: st, Oldest: oldest})
		}
	}
	return out, nil
}

// queueNames returns the names of the registry, sorted, after the scan
// that lists every queue if the registry lacks listedAll.
func (s *Store) queueNames(ctx context.Context) ([]string, error) {
	names, err := s.c.SMembers(ctx, s.registry).Result()
	if err != nil {
		return nil, wrap("queues", err)
	}
	if !slices.Contains(names, listedAll) {
		// One scan at a time in a process: the calls that come meanwhile
		// find it done.
		s.scanMu.Lock()
		defer s.scanMu.Unlock()
		if names, err = s.c.SMembers(ctx, s.registry).Result(); err != nil {
			return nil, wrap("queues", err)
		}
	}
	if !slices.Contains(names, listedAll) {
		found, err := s.scanQueues(ctx)
		if err != nil {
			return nil, wrap("queues", err)
		}
		for len(found) > 0 {
			n := min(len(found), 1000)
			if err := s.c.SAdd(ctx, s.registry, found[:n]...).Err(); err != nil {
				return nil, wrap("queues", err)
			}
			found = found[n:]
		}
		if err := s.c.SAdd(ctx, s.registry, listedAll).Err(); err != nil {
			return nil, wrap("queues", err)
		}
		if names, err = s.c.SMembers(ctx, s.registry).Result(); err != nil {
			return nil, wrap("queues", err)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == listedAll })
	slices.Sort(names)
	return names, nil
}

// scanQueues returns the names of the Store's queues that have a meta
// hash, found by SCAN on every master, 1,000 keys a step.
func (s *Store) scanQueues(ctx context.Context) ([]any, error) {
	start := redisname.KeyPrefix(s.cfg.Prefix) // "{P}:"
	tag := start[1 : len(start)-2]
	match := "{" + globEscape(tag) + ":*}:meta"
	var mu sync.Mutex
	var found []any
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			// The pattern matches more than the meta of a queue: a key
			// named "x}:meta", say.
			parts, rest, ok := redisname.Parts(iter.Val())
			if ok && rest == "meta" && len(parts) == 2 && parts[0] == s.cfg.Prefix {
				mu.Lock()
				found = append(found, parts[1])
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	var err error
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return scan(ctx, m) })
	} else {
		err = scan(ctx, s.c)
	}
	return found, err
}

// globEscape escapes the bytes that SCAN's MATCH reads as a pattern.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
