package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pacerkit/pacer/store"
)

// purgeChunk is the most dead letters one purge script removes: a long
// purge runs as several scripts so that it never stalls the server.
const purgeChunk = 1000

// DeadLetters returns up to limit dead letters of queue, oldest first,
// starting after the one with ID after; see store.DeadLetters.
func (s *Store) DeadLetters(ctx context.Context, queue string, after uint64, limit int) ([]store.DeadLetter, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	r, err := s.call(ctx, deadLettersFn, q.dead, q.prefix, strconv.FormatUint(after, 10), limit).Slice()
	if err != nil {
		return nil, wrap("dead letters", err)
	}
	ds := make([]store.DeadLetter, 0, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		d, err := parseDeadLetter(r[i], r[i+1])
		if err != nil {
			return nil, wrap("dead letters", err)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// parseDeadLetter reads one dead letter of deadletters.lua's reply.
func parseDeadLetter(rid, rfields any) (store.DeadLetter, error) {
	sid, _ := rid.(string)
	id, err := strconv.ParseUint(sid, 10, 64)
	if err != nil {
		return store.DeadLetter{}, fmt.Errorf("dead letter id %q", sid)
	}
	f, _ := rfields.([]any)
	if len(f) < 4 {
		return store.DeadLetter{}, fmt.Errorf("dead letter %d is gone or damaged", id)
	}
	d := store.DeadLetter{ID: id}
	d.Key, _ = f[0].(string)
	d.Err, _ = f[1].(string)
	sa, _ := f[2].(string)
	st, _ := f[3].(string)
	a, err1 := strconv.Atoi(sa)
	at, err2 := strconv.ParseInt(st, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return store.DeadLetter{}, fmt.Errorf("dead letter %d: %w", id, err)
	}
	d.Attempt, d.At = a, time.UnixMicro(at)
	for _, e := range f[4:] {
		s, _ := e.(string)
		_, v, err := unstamp(s)
		if err != nil {
			return store.DeadLetter{}, fmt.Errorf("dead letter %d: %w", id, err)
		}
		d.Values = append(d.Values, v)
	}
	return d, nil
}

// Redrive appends the values of the dead letter id to the tail of its key,
// ready at once, and removes the dead letter, in one script; see
// store.DeadLetters.
func (s *Store) Redrive(ctx context.Context, queue string, id uint64) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	if err := s.list(ctx, q, "redrive"); err != nil {
		return false, err
	}
	r, err := s.run(ctx, redriveFn, q.ready, q.prefix, strconv.FormatUint(id, 10)).Int()
	if err != nil {
		return false, wrap("redrive", err)
	}
	return r == 1, nil
}

// Purge removes the dead letters of queue dropped before t, on the
// server's clock; see store.DeadLetters. It runs one script per thousand
// dead letters, so a purge that fails part way may have removed some.
func (s *Store) Purge(ctx context.Context, queue string, before time.Time) (int, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return 0, err
	}
	total := 0
	for {
		r, err := s.call(ctx, purgeFn, q.dead, q.prefix, before.UnixMicro(), purgeChunk).Int()
		if err != nil {
			return total, wrap("purge", err)
		}
		total += r
		if r < purgeChunk {
			return total, nil
		}
	}
}
