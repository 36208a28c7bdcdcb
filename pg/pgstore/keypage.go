package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/pacerkit/pacer/store"
)

// The pages of a queue's keys (Keys) follow the index keys_by_name: by
// the first nameBytes bytes of the key, in byte order, then by the key's
// SHA-256. A cursor is the place of the last row a page read in that
// order, its name and hash, so it stays valid while keys come and go.

// scanRows bounds the rows of the index that one page reads: a page whose
// filter few keys pass stops there, short or empty, with a cursor to go
// on from.
const scanRows = 5000

// Page limits of store.KeyQuery.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// Keys implements store.Inspector: one statement, which reads at most
// Limit+1 entries of an index in order from the cursor, or, with a filter
// that not every key passes, at most 5,000 (the page is then short, and
// may be empty, with a Next): O(Limit log n) and O(log n) a row for a
// queue of n keys. The order is that of the keys' first 64 bytes, then of
// their SHA-256: by key, for keys that differ in their first 64 bytes.
// A prefix of up to 64 bytes is a range of that order, so it reads only
// the keys that start with it; a longer one reads the keys that share its
// first 64 bytes. The held keys and the retrying keys have an index of
// their own in that order, so that a page of either reads only them.
func (s *Store) Keys(ctx context.Context, queue string, q store.KeyQuery) (store.KeyPage, error) {
	if err := s.begin(ctx, queue); err != nil {
		return store.KeyPage{}, err
	}
	if q.State > store.Deferred {
		return store.KeyPage{}, fmt.Errorf("pgstore: Keys: unknown KeyState %d", q.State)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	prefix := bytesOf(q.Prefix)
	lo, hi := prefixRange(prefix)
	name, hash, err := decodeCursor(q.Cursor)
	if err != nil {
		return store.KeyPage{}, err
	}
	if q.Cursor == "" || bytes.Compare(name, lo) < 0 {
		name, hash = lo, []byte{} // before every key that starts with lo
	}
	sql, args := s.keysPage(queue, q.State, prefix, name, hash, hi, limit)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return store.KeyPage{}, failed(ctx, "Keys", err)
	}
	defer rows.Close()
	var (
		page     store.KeyPage
		last     []byte // the cursor of the last key in the page
		full     bool   // a key matched past the page's limit
		scanned  []byte // the cursor of the scanRows-th row read, if read
		n        int64
		match    bool
		rowName  []byte
		rowHash  []byte
		cursorOf = func() []byte { return append(append([]byte{}, rowName...), rowHash...) }
	)
	for rows.Next() {
		info, err := scanKeyInfo(rows, &n, &match, &rowName, &rowHash)
		if err != nil {
			return store.KeyPage{}, failed(ctx, "Keys", err)
		}
		if match {
			if len(page.Keys) == limit {
				full = true
			} else {
				page.Keys = append(page.Keys, info)
				last = cursorOf()
			}
		}
		if n == scanRows {
			scanned = cursorOf()
		}
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
func (s *Store) keysPage(queue string, state store.KeyState, prefix, name, hash, hi []byte, limit int) (string, []any) {
	args := []any{inspectMode, queue, name, hash, int32(state), prefix, int64(limit) + 1}
	var bound, partial string
	if hi != nil {
		bound = " AND substring(k.key FROM 1 FOR " + fmt.Sprint(nameBytes) + ") < $7::bytea"
		args = append(args, hi)
	}
	switch state {
	case store.Held:
		partial = " AND k.held"
	case store.Retrying:
		partial = " AND k.retrying"
	}
	r := strings.NewReplacer("{hi}", bound, "{partial}", partial, "{scan}", fmt.Sprint(scanRows))
	return r.Replace(s.q.keysPage), args
}

// prefixRange returns the range of names (first nameBytes bytes) of the
// keys that start with prefix: from lo, inclusive, to hi, exclusive, or
// to the end when hi is nil.
func prefixRange(prefix []byte) (lo, hi []byte) {
	lo = prefix[:min(len(prefix), nameBytes):min(len(prefix), nameBytes)]
	hi = bytes.Clone(lo)
	for len(hi) > 0 && hi[len(hi)-1] == 0xff {
		hi = hi[:len(hi)-1]
	}
	if len(hi) == 0 {
		return lo, nil // every name from lo on starts with lo
	}
	hi[len(hi)-1]++
	return lo, hi
}

// encodeCursor returns the cursor of a place: a name and a hash.
func encodeCursor(place []byte) string {
	return base64.RawURLEncoding.EncodeToString(place)
}

// decodeCursor returns the name and hash of a cursor; none for "".
func decodeCursor(c string) (name, hash []byte, err error) {
	if c == "" {
		return nil, nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && (len(b) < sha256.Size || len(b) > nameBytes+sha256.Size) {
		err = errors.New("wrong length")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: Keys: cursor %q is not one of pgstore's: %w", c, err)
	}
	n := len(b) - sha256.Size
	return b[:n:n], b[n:], nil
}
