package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pacerkit/pacer/store"
)

// Wait implements store.Store. It hears of changes by LISTEN/NOTIFY, from
// every process, on one connection per Store that the first Wait opens.
// Notifications are a hint: a Wait first registers for the queue's next
// notification, then reads when the queue's next key is ready (one
// statement), and returns at once if one is; so a change committed before
// that read is seen by it, and one committed after is heard. It then
// sleeps until the earliest of d, that key's time and a notification; a
// change made through the same Store wakes it at once, without waiting for
// its notification to come back from the server. The
// Store's listening connection looks at the queues of its sleeping Waits
// every Config.PollInterval, in one statement for all of them, and wakes
// those whose queue has a key ready, or due before the next look: so a
// lost notification delays work by PollInterval at most, and a Store
// whose Waits sleep costs the server one statement per PollInterval,
// however many they are. While that connection is down, each Wait sleeps
// PollInterval at most.
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
	woken, listening := ln.enter(queue)
	defer ln.leave(queue)
	var (
		now      time.Time
		upcoming pgtype.Timestamptz
	)
	if err := s.pool.QueryRow(ctx, s.q.upcoming, []string{queue}).Scan(&now, nil, &upcoming); err != nil {
		return failed(ctx, "Wait", err)
	}
	next := until(now, upcoming)
	if next == 0 {
		return nil
	}
	sleep := min(d, next)
	if !listening {
		sleep = min(sleep, s.cfg.PollInterval)
	}
	t := time.NewTimer(sleep)
	defer t.Stop()
	select {
	case <-woken:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		return store.ErrClosed
	}
	return nil
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
		s.ln = startListener(s.pool, s.channel, s.q.upcoming, s.cfg.PollInterval)
	}
	return s.ln, nil
}
