package pgstore

import "github.com/jackc/pgx/v5"

// AcksWaiting returns how many Acks of queue wait for a flight, and how
// many fly.
func AcksWaiting(s *Store, queue string) (waiting, flying int) {
	s.acks.Lock()
	defer s.acks.Unlock()
	for g, q := range s.ackQueues {
		if g.queue == queue {
			waiting += len(q.waiting)
			flying += q.boarded
		}
	}
	return waiting, flying
}

// Waiting returns how many Waits of s sleep on queue, and whether its
// listener listens.
func Waiting(s *Store, queue string) (n int, listening bool) {
	s.mu.Lock()
	l := s.ln
	s.mu.Unlock()
	if l == nil {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.waits {
		n += w.queues[queue]
	}
	return n, l.listening
}

// SchemaOf returns the schema of s, quoted.
func SchemaOf(s *Store) string { return pgx.Identifier{s.cfg.Schema}.Sanitize() }

// MuteNotifications makes the notifications that s sends go to a channel
// that nobody listens to, its own listener included, which it starts
// first: s's Waits then hear of s's changes only in the process.
func MuteNotifications(s *Store) error {
	if _, err := s.listener(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channel += "_muted"
	return nil
}

// TurnsLock returns the name of the lock of queue's turns, for
// turnsLockSQL.
func TurnsLock(s *Store, queue string) string { return s.turnsLock(queue) }
