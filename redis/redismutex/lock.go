package redismutex

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A Lock is a lock held, returned by TryLock and LockContext. Its methods
// are safe for concurrent use.
type Lock struct {
	m     *Locker
	key   string
	name  string // the lock's Redis key
	token string // the holder's, in the lock's value
	fence uint64

	lease lease

	mu       sync.Mutex
	ctx      *lockContext // made by the first call of Context
	cancel   context.CancelCauseFunc
	ended    error // why ctx is cancelled, or would be
	released bool  // release.lua answered
}

// Fence returns the lock's fencing token: a number that grows with every
// acquisition of any key by any Locker of the same Prefix and Name, and
// so with every acquisition of this key. Send it with each write that the
// lock protects, and have the resource refuse a write whose fence is
// lower than one it has seen: that keeps a holder that lost the lock
// without knowing (paused past its TTL) from overwriting the work of the
// next. See the package doc.
func (l *Lock) Fence() uint64 { return l.fence }

// Context returns a context that is cancelled when the lock is lost, with
// cause ErrLockLost (context.Cause tells), when Unlock is called, or when
// the Locker is closed, with cause ErrClosed. Run the work the lock
// protects under it. FenceFrom reads the lock's fence from it.
//
// The context is made when first asked for, which keeps it off the cost
// of a lock that nobody asks.
func (l *Lock) Context() context.Context { return l.contextIn(l.m.ctx) }

// contextIn returns the Context, made as a child of parent if this is the
// first call.
func (l *Lock) contextIn(parent context.Context) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil {
		if l.ended != nil {
			parent = context.Background() // keep l.ended as the cause
		}
		held, cancel := context.WithCancelCause(parent)
		l.ctx, l.cancel = &lockContext{Context: held, lock: l}, cancel
		if l.ended != nil {
			cancel(l.ended)
		}
	}
	return l.ctx
}

// end cancels the Context, made or to be made, with cause err, unless it
// ended before.
func (l *Lock) end(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended != nil {
		return
	}
	l.ended = err
	if l.cancel != nil {
		l.cancel(err)
	}
}

// Unlock releases the lock: it stops the renewals, cancels the Context,
// and deletes the lock in Redis if it is still the holder's, waking who
// waits for it. It returns ErrLockLost, without asking Redis, if the lock
// was lost before; ErrLockLost too if the lock was no longer the holder's
// in Redis (as after a first Unlock); and an error of the client if Redis
// did not answer, in which case the lock lapses at the end of its TTL, and
// Unlock may be called again.
func (l *Lock) Unlock(ctx context.Context) error {
	lost := l.m.leases.stop(&l.lease)
	l.end(context.Canceled)
	l.mu.Lock()
	released := l.released
	l.mu.Unlock()
	if lost || released {
		return ErrLockLost
	}
	n, err := releaseFn.run(ctx, l.m.c, 1, l.name, l.token).Int()
	if err != nil {
		return fmt.Errorf("redismutex: unlock %q: %w", l.key, err)
	}
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
	if n == 0 {
		return ErrLockLost
	}
	return nil
}

// renew runs renew.lua once; see leaseOwner.
func (l *Lock) renew(deadline time.Time) (bool, error) {
	ctx, cancel := context.WithDeadline(l.m.ctx, deadline)
	defer cancel()
	n, err := renewFn.run(ctx, l.m.c, 1, l.name, l.token, l.m.ms).Int()
	return n == 1, err
}

// lose cancels the Context; see leaseOwner.
func (l *Lock) lose() { l.end(ErrLockLost) }

// lockContext is a Lock's Context: it answers FenceFrom, and is the
// context of its parent otherwise.
type lockContext struct {
	context.Context
	lock *Lock
}

type fenceKey struct{}

func (c *lockContext) Value(k any) any {
	if k == (fenceKey{}) {
		return c.lock
	}
	return c.Context.Value(k)
}

// FenceFrom returns the fence of the lock whose context ctx is, or
// descends from: the ctx Do passes to its fn, or a Lock's Context. It
// reports false for any other ctx.
func FenceFrom(ctx context.Context) (uint64, bool) {
	if l, ok := ctx.Value(fenceKey{}).(*Lock); ok {
		return l.fence, true
	}
	return 0, false
}
