package redismutex

import (
	"context"
	"errors"
)

// Do runs fn holding the lock of key: it takes the lock as LockContext
// does, runs fn, and unlocks, also when fn panics (the panic then goes on
// once the lock is released).
//
// fn's ctx carries ctx's values and ends when ctx ends, or when the lock
// is lost, with cause ErrLockLost (context.Cause tells), or when the
// Locker is closed, with cause ErrClosed; FenceFrom reads the lock's
// fence from it. fn should stop its work when its ctx ends.
//
// Do returns the error of LockContext without calling fn; or fn's error,
// joined with Unlock's: errors.Is(err, ErrLockLost) reports that the lock
// was lost while fn ran, even if fn returned nil. Unlock runs when ctx has
// ended too, with a timeout of the TTL.
func (m *Locker) Do(ctx context.Context, key string, fn func(ctx context.Context) error) (err error) {
	l, err := m.LockContext(ctx, key)
	if err != nil {
		return err
	}
	// fn's ctx is the Lock's Context, made a child of ctx: a loss
	// cancels it at once; Close, which cancels the Locker's, through an
	// AfterFunc.
	fnCtx := l.contextIn(ctx)
	stop := context.AfterFunc(m.ctx, func() { l.end(ErrClosed) })
	defer func() {
		stop()
		unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.ttl)
		defer cancel()
		if uerr := l.Unlock(unlockCtx); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}()
	return fn(fnCtx)
}
