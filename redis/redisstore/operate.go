package redisstore

import (
	"context"

	"github.com/pacerkit/pacer/store"
)

var _ store.Operator = (*Store)(nil)

// PauseQueue stops every process from leasing queue's keys until
// ResumeQueue, in one script that sets the queue's paused flag, which the
// claiming function reads; see store.Operator. It costs O(1).
func (s *Store) PauseQueue(ctx context.Context, queue string) (bool, error) {
	return s.pauseQueue(ctx, queue, true)
}

// ResumeQueue ends PauseQueue, and wakes a waiting worker, whose Claim
// passes the wake-up on while keys are left ready; see store.Operator. It
// costs O(1).
func (s *Store) ResumeQueue(ctx context.Context, queue string) (bool, error) {
	return s.pauseQueue(ctx, queue, false)
}

// QueuePaused reports whether queue is paused, in one command that reads
// the queue's paused flag; see store.Operator. It costs O(1).
func (s *Store) QueuePaused(ctx context.Context, queue string) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	n, err := s.c.Exists(ctx, q.paused[0]).Result()
	if err != nil {
		return false, wrap("queue paused", err)
	}
	return n == 1, nil
}

func (s *Store) pauseQueue(ctx context.Context, queue string, pause bool) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	op, arg := "resume queue", 0
	if pause {
		op, arg = "pause queue", 1
	}
	r, err := s.call(ctx, pauseQueueFn, q.paused, q.prefix, arg).Int()
	if err != nil {
		return false, wrap(op, err)
	}
	return r == 1, nil
}

// PauseKey stops every process from leasing key until ResumeKey, in one
// script; see store.Operator. The key joins the queue's set of paused
// keys; a key in the ready order is set aside now, and one that comes
// ready later (its burst, retry delay or lease's TTL passes, a Finish or
// Release puts it back) is set aside by the Claim that meets it, which
// leases another in its place. It costs O(log n) in the keys of the
// queue.
func (s *Store) PauseKey(ctx context.Context, queue, key string) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	r, err := s.call(ctx, pauseKeyFn, q.pausedKeys, q.prefix, key).Int()
	if err != nil {
		return false, wrap("pause key", err)
	}
	return r == 1, nil
}

// ResumeKey ends PauseKey, in one script: a key that is ready, set aside
// or not, goes to the tail of the ready order, and a waiting worker
// wakes; see store.Operator. It costs O(log n) in the keys of the queue.
func (s *Store) ResumeKey(ctx context.Context, queue, key string) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	r, err := s.call(ctx, resumeKeyFn, q.pausedKeys, q.prefix, key).Int()
	if err != nil {
		return false, wrap("resume key", err)
	}
	return r == 1, nil
}

// RetryNow makes a retrying or deferred key ready now, at the tail of the
// ready order, in one script, and wakes a waiting worker; see
// store.Operator. A key whose delay passed is ready already, and left as
// it is (false). It costs O(log n) in the keys of the queue.
func (s *Store) RetryNow(ctx context.Context, queue, key string) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	r, err := s.call(ctx, retryNowFn, q.hash(key), q.prefix, key).Int()
	if err != nil {
		return false, wrap("retry now", err)
	}
	return r == 1, nil
}

// DropKey moves all of key's values to one dead letter with reason as its
// Err, in one script that folds the Adds of the inbox first, and removes
// the key's state, its lease's fence with it; see store.Operator. The
// dead letter's Attempt is that of the key's last lease (0 if none). It
// costs O(log n) in the keys of the queue plus O(values) of the key.
func (s *Store) DropKey(ctx context.Context, queue, key, reason string) (int, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return 0, err
	}
	r, err := s.run(ctx, dropKeyFn, q.hash(key), q.prefix, key, reason).Int()
	if err != nil {
		return 0, wrap("drop key", err)
	}
	return r, nil
}
