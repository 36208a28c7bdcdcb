package main

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/mutex"
	"github.com/pacerkit/pacer/ratelimit"
)

// accountLocks gives each account one fan-out at a time.
type accountLocks interface {
	// do runs fn holding account's lock. fence grows with every
	// acquisition of the account's lock, for the writes fn makes (0 when
	// the lock is this process's alone). fn's ctx ends if the lock is lost.
	do(ctx context.Context, account string, fn func(ctx context.Context, fence uint64) error) error
}

// accountLimits is each account's token bucket.
type accountLimits interface {
	// Wait takes a token from account's bucket, waiting for it; it fails
	// if ctx ends first or if its deadline comes before the token.
	Wait(ctx context.Context, account string) error
	// PauseKey holds account's bucket for d, as a 429 asks.
	PauseKey(ctx context.Context, account string, d time.Duration) error
}

// localLocks are the account locks of one process: waiters take turns in
// arrival order.
type localLocks struct{ m mutex.Keyed[string] }

func (l *localLocks) do(ctx context.Context, account string, fn func(context.Context, uint64) error) error {
	return l.m.Do(ctx, account, func(ctx context.Context) error { return fn(ctx, 0) })
}

// localLimits are the account buckets of one process.
type localLimits struct{ k *ratelimit.Keyed[string] }

func (l localLimits) Wait(ctx context.Context, account string) error { return l.k.Wait(ctx, account) }

func (l localLimits) PauseKey(_ context.Context, account string, d time.Duration) error {
	l.k.PauseKey(account, d)
	return nil
}
