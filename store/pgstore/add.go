package pgstore

import (
	"context"
	"fmt"

	"github.com/pacerkit/pacer/store"
)

// Add implements store.Store: one statement, committed before it returns.
func (s *Store) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	sql, args, err := s.add(queue, key, vals, p)
	if err != nil || sql == "" {
		return err
	}
	if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
		return failed(ctx, "Add", err)
	}
	return nil
}

// add returns the statement of an Add and its arguments; no statement for
// no values.
func (s *Store) add(queue, key string, vals [][]byte, p store.AddParams) (string, []any, error) {
	if p.Wait < 0 || p.MaxWait < 0 {
		return "", nil, fmt.Errorf("pgstore: AddParams.Wait and MaxWait must be >= 0, got %v and %v", p.Wait, p.MaxWait)
	}
	if len(vals) == 0 {
		return "", nil, nil
	}
	vals = notNull(vals)
	if p.Wait == 0 {
		return s.q.addReady, []any{queue, bytesOf(key), vals, s.channel, payload(queue)}, nil
	}
	var maxWait any // NULL: no bound
	if p.MaxWait > 0 {
		maxWait = interval(p.MaxWait)
	}
	return s.q.addBurst, []any{queue, bytesOf(key), vals, interval(p.Wait), maxWait, s.channel, payload(queue)}, nil
}

// notNull returns vals with every nil value made empty, since a nil one
// would be NULL; it copies vals only if it has one.
func notNull(vals [][]byte) [][]byte {
	for i, v := range vals {
		if v == nil {
			out := make([][]byte, len(vals))
			copy(out, vals)
			for j := i; j < len(out); j++ {
				if out[j] == nil {
					out[j] = []byte{}
				}
			}
			return out
		}
	}
	return vals
}
