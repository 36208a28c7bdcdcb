package redisstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/pacerkit/pacer/store"
)

// The bounds of a page of Keys.
const (
	defaultPage = 100  // keys in a page of KeyQuery.Limit 0 or less
	mostPage    = 1000 // the most keys in a page
	// filterRead is the most members of the index that a page with a
	// state filter reads, if its Limit is lower: the filter may keep few.
	filterRead = 1000
)

// indexing is the reply of keys.lua when the queue's index of keys
// disagrees with its state sets: Keys has reindex.lua fix it first.
const indexing = "INDEXING"

// Keys returns a page of queue's keys, in the order of their bytes, in one
// script that folds the Adds of the inbox first; see store.Inspector.
//
// The queue's keys are indexed, in a sorted set that every function keeps
// as it gives a key its first value or takes its last, so that a page
// walks the index from its cursor: a prefix is a range of it, and a page
// costs O(log n + r) in the n keys of the queue, where r is the members
// of the index it reads, each a key's state, the count of its values and
// the time of its first: r is Limit without a state filter, and with one,
// at most 1,000 or Limit, whichever is more, after which the page ends
// short, with a Next. No call reads the whole queue, nor the keyspace.
//
// A queue whose keys were given values by a version of this package that
// did not index them is indexed first (the script compares the index's
// count with the keys' in O(1)), in calls of bounded work: O(n) in all,
// once.
func (s *Store) Keys(ctx context.Context, queue string, kq store.KeyQuery) (store.KeyPage, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return store.KeyPage{}, err
	}
	limit := kq.Limit
	switch {
	case limit <= 0:
		limit = defaultPage
	case limit > mostPage:
		limit = mostPage
	}
	if kq.State > store.Scheduled {
		return store.KeyPage{}, fmt.Errorf("redisstore: KeyQuery.State %d is no state", kq.State)
	}
	after, err := decodeCursor(kq.Cursor)
	if err != nil {
		return store.KeyPage{}, err
	}
	read := limit
	if kq.State != 0 {
		read = max(limit, filterRead)
	}
	from, to := lexFrom(kq.Prefix, after), lexTo(kq.Prefix)
	check := 1
	for {
		r, err := s.run(ctx, keysFn, q.keys, q.prefix, from, to, limit, read, int(kq.State), check).Result()
		if err != nil {
			return store.KeyPage{}, wrap("keys", err)
		}
		if v, ok := r.(string); ok && v == indexing {
			if err := s.reindex(ctx, q); err != nil {
				return store.KeyPage{}, err
			}
			check = 0 // once: under processes that do not index, it may never agree
			continue
		}
		page, err := parsePage(r)
		if err != nil {
			return store.KeyPage{}, wrap("keys", err)
		}
		return page, nil
	}
}

// reindex runs reindex.lua's steps on q until they are done.
func (s *Store) reindex(ctx context.Context, q *queue) error {
	var step any = int64(1)
	var cursor any = "0"
	for step != int64(0) {
		r, err := s.call(ctx, reindexFn, q.keys, q.prefix, step, cursor).Slice()
		if err != nil {
			return wrap("indexing the keys", err)
		}
		if len(r) != 2 {
			return wrap("indexing the keys", fmt.Errorf("reply of %d", len(r)))
		}
		step, cursor = r[0], r[1]
	}
	return nil
}

// parsePage reads keys.lua's reply: {next, info, ...}.
func parsePage(r any) (store.KeyPage, error) {
	f, ok := r.([]any)
	if !ok || len(f) == 0 {
		return store.KeyPage{}, fmt.Errorf("reply of %T", r)
	}
	var page store.KeyPage
	if next, ok := f[0].(string); ok {
		page.Next = encodeCursor(next)
	}
	for _, e := range f[1:] {
		info, err := parseKeyInfo(e)
		if err != nil {
			return store.KeyPage{}, err
		}
		page.Keys = append(page.Keys, info)
	}
	return page, nil
}

// A cursor is "k" and the last key read, in unpadded URL-safe base64: it
// prints, and is never "", which ends the paging.
func encodeCursor(key string) string {
	return "k" + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// decodeCursor returns the key a cursor names, and whether it names one.
func decodeCursor(c string) (*string, error) {
	if c == "" {
		return nil, nil
	}
	if c[0] != 'k' {
		return nil, errors.New("redisstore: KeyQuery.Cursor is not one that Keys gave")
	}
	b, err := base64.RawURLEncoding.DecodeString(c[1:])
	if err != nil {
		return nil, errors.New("redisstore: KeyQuery.Cursor is not one that Keys gave")
	}
	key := string(b)
	return &key, nil
}

// lexFrom is where a page starts, as ZRANGE BYLEX takes it: after the key
// after if there is one at or after prefix, else at prefix.
func lexFrom(prefix string, after *string) string {
	switch {
	case after != nil && *after >= prefix:
		return "(" + *after
	case prefix == "":
		return "-"
	}
	return "[" + prefix
}

// lexTo is where the keys that start with prefix end, as ZRANGE BYLEX
// takes it: before the least string greater than all of them, if any.
func lexTo(prefix string) string {
	b := []byte(prefix)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "+"
	}
	b[len(b)-1]++
	return "(" + string(b)
}
