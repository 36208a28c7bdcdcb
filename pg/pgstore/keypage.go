package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/pacerkit/pacer/store"
)

// The pages of a queue's keys (Keys) follow its primary key: by the keys'
// SHA-256. A cursor is the hash of the last row a page read, so it stays
// valid while keys come and go.

// scanRows bounds the rows that one page reads: a page whose filter few
// keys pass stops there, short or empty, with a cursor to go on from.
const scanRows = 2000

// Page limits of store.KeyQuery.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// Keys implements store.Inspector: one statement, which reads the keys of
// the queue in the order of their SHA-256 (the primary key's) from the
// cursor until Limit+1 of them matched, and then each shown key's first
// value: O(log n + Limit) for a queue of n keys without a filter. The held
// keys and the retrying keys have an index of their own in that order, so
// that a page of either reads only them. Another state, or a prefix, is
// checked on the keys read, and a page reads at most 2,000 of them: it is
// then short, possibly empty, with a Next, and a filter that few keys pass
// takes n/2,000 pages to read through. (Key reads one key directly.)
func (s *Store) Keys(ctx context.Context, queue string, q store.KeyQuery) (store.KeyPage, error) {
	if err := s.begin(ctx, queue); err != nil {
		return store.KeyPage{}, err
	}
	if q.State > store.Scheduled {
		return store.KeyPage{}, fmt.Errorf("pgstore: Keys: unknown KeyState %d", q.State)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	after, err := decodeCursor(q.Cursor)
	if err != nil {
		return store.KeyPage{}, err
	}
	sql, args := s.keysPage(queue, q.State, bytesOf(q.Prefix), after, limit)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return store.KeyPage{}, failed(ctx, "Keys", err)
	}
	defer rows.Close()
	var (
		page    store.KeyPage
		last    []byte // the hash of the last key in the page
		full    bool   // a key matched past the page's limit
		scanned []byte // the hash of the scanRows-th row read, if read
		n       int64
		match   bool
		hash    []byte
	)
	for rows.Next() {
		info, err := scanKeyInfo(rows, &n, &match, &hash)
		if err != nil {
			return store.KeyPage{}, failed(ctx, "Keys", err)
		}
		if match {
			if len(page.Keys) == limit {
				full = true
			} else {
				page.Keys = append(page.Keys, info)
				last = hash
			}
		}
		if n == scanRows {
			scanned = hash
		}
		hash = nil // a new slice for the next row's
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.KeyPage{}, failed(ctx, "Keys", err)
	}
	switch {
	case full:
		page.Next = encodeCursor(last)
	case scanned != nil:
		page.Next = encodeCursor(scanned)
	}
	return page, nil
}

// keysPage returns the statement of a page and its arguments.
func (s *Store) keysPage(queue string, state store.KeyState, prefix, after []byte, limit int) (string, []any) {
	var partial string
	switch state {
	case store.Held:
		partial = " AND k.held"
	case store.Retrying:
		partial = " AND k.retrying"
	}
	r := strings.NewReplacer("{partial}", partial, "{scan}", fmt.Sprint(scanRows))
	return r.Replace(s.q.keysPage), []any{inspectMode, queue, after, int32(state), prefix, int64(limit) + 1}
}

// encodeCursor returns the cursor of the page after the key whose
// SHA-256 is hash.
func encodeCursor(hash []byte) string {
	return base64.RawURLEncoding.EncodeToString(hash)
}

// decodeCursor returns the hash that a cursor starts after: none, which
// is before every hash, for "".
func decodeCursor(c string) ([]byte, error) {
	if c == "" {
		return []byte{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && len(b) != sha256.Size {
		err = errors.New("wrong length")
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: Keys: cursor %q is not one of pgstore's: %w", c, err)
	}
	return b, nil
}
