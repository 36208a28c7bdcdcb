package redismutex

import "errors"

var (
	// ErrLocked is returned by TryLock when another holder has the lock.
	ErrLocked = errors.New("redismutex: locked")

	// ErrLockLost is the cause with which a Lock's Context is cancelled
	// when the lock is no longer its holder's, and what Unlock then
	// returns.
	ErrLockLost = errors.New("redismutex: lock lost")

	// ErrClosed is returned by the calls of a Locker after Close, and is
	// the cause with which Close cancels the Context of the Locks it held.
	ErrClosed = errors.New("redismutex: Locker closed")
)
