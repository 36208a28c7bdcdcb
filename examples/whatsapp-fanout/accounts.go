package main

import (
	"context"
	"sync"
	"time"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// accountLocks gives each account one fan-out at a time: a mutex.Keyed
// in one process, a redismutex.Locker across instances (fn's ctx then
// ends if the lock is lost, and redismutex.FenceFrom reads its fence).
type accountLocks interface {
	Do(ctx context.Context, account string, fn func(ctx context.Context) error) error
}

// accountLimits is each account's token bucket.
type accountLimits interface {
	// Wait takes a token from account's bucket, waiting for it; it fails
	// if ctx ends first or if its deadline comes before the token.
	Wait(ctx context.Context, account string) error
	// PauseKey holds account's bucket for d, as a 429 asks.
	PauseKey(ctx context.Context, account string, d time.Duration) error
}

// localLimits are the account buckets of one process.
type localLimits struct{ k *ratelimit.Keyed[string] }

func (l localLimits) Wait(ctx context.Context, account string) error { return l.k.Wait(ctx, account) }

func (l localLimits) PauseKey(_ context.Context, account string, d time.Duration) error {
	l.k.PauseKey(account, d)
	return nil
}

// redisLimits are account buckets in Redis, shared by every instance. Each
// account's KeyLimiter is kept, so that a pause (a 429) also holds the
// sends of this process that were already waiting for a token.
type redisLimits struct {
	k *redisrate.Keyed

	mu        sync.Mutex
	byAccount map[string]*redisrate.KeyLimiter
}

func (l *redisLimits) For(account string) *redisrate.KeyLimiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	kl, ok := l.byAccount[account]
	if !ok {
		kl = l.k.For(account)
		l.byAccount[account] = kl
	}
	return kl
}

func (l *redisLimits) Wait(ctx context.Context, account string) error {
	return l.For(account).Wait(ctx)
}

func (l *redisLimits) PauseKey(ctx context.Context, account string, d time.Duration) error {
	return l.For(account).Pause(ctx, d)
}
