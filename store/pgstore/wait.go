package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pacerkit/pacer/store"
)

// Wait implements store.Store. It hears of changes by LISTEN/NOTIFY, from
// every process, on one connection per Store that the first Wait opens.
// Notifications are a hint: a Wait first registers for the queue's next
// notification, then marks the queue as watched and reads when its next
// key is ready, and returns at once if one is; so a change committed
// before that read is seen by it, and one committed after is heard (see
// watch.go for why a change that saw no watcher needs no notification).
// It then sleeps until the earliest of d, that key's time, a
// notification, and Config.PollInterval, which bounds how late a lost
// notification makes work. It keeps one connection of the pool while it
// sleeps, which holds the mark.
func (s *Store) Wait(ctx context.Context, queue string, d time.Duration) error {
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	ln, err := s.listener()
	if err != nil {
		return err
	}
	changed := ln.changed(payload(queue))
	w, next, err := s.watch(ctx, queue)
	if err != nil {
		return failed(ctx, "Wait", err)
	}
	defer s.unwatch(w)
	if next == 0 {
		return nil
	}
	t := time.NewTimer(min(d, next, s.cfg.PollInterval))
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		return store.ErrClosed
	}
	return nil
}

// watch takes the mark of queue on a connection of the pool, passes the
// gate, and then reads when the queue's next key is ready, in one round
// trip; see watch.go.
func (s *Store) watch(ctx context.Context, queue string) (*watch, time.Duration, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, 0, err
	}
	gate, mark := watchKeys(s.channel, queue)
	var (
		b        pgx.Batch
		now      time.Time
		upcoming pgtype.Timestamptz
	)
	b.Queue(watchSQL, gate, mark)
	b.Queue(s.q.upcoming, queue).QueryRow(func(r pgx.Row) error { return r.Scan(&now, &upcoming) })
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		// The session may hold the mark: it ends with the connection.
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		return nil, 0, err
	}
	return &watch{conn: conn, mark: mark}, until(now, upcoming), nil
}

// listener returns the store's listener, starting it on first use.
func (s *Store) listener() (*listener, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		return nil, store.ErrClosed
	default:
	}
	if s.ln == nil {
		s.ln = startListener(s.pool, s.channel)
	}
	return s.ln, nil
}
