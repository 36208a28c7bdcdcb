//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package mutex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// Polling bounds of LockFile: the first retry comes after minPoll, each
// next one after twice as long, never more than maxPoll, so a released lock
// is noticed within maxPoll.
const (
	minPoll = time.Millisecond
	maxPoll = 50 * time.Millisecond
)

// LockFile takes an exclusive flock(2) lock on the file at path, for mutual
// exclusion between processes on one host. It returns a func that releases
// the lock.
//
// The file is created if missing, with permission 0o600 (before umask), so
// only processes of the same user can open it for locking; create it
// beforehand with wider permissions if several users must share it. The
// file is opened for reading and writing because some file systems (NFS)
// grant exclusive locks only on writable descriptors. Its contents are
// never read or written.
//
// LockFile never deletes the file, and callers should not either: a flock
// belongs to an open file, not to a name, so if the file were removed while
// one process holds it, the next process would create a new file under the
// same name and lock it too, and both would run at once. An idle lock file
// costs a directory entry and nothing else.
//
// While the lock is held by another open file (in this or another process),
// LockFile polls with a non-blocking flock, backing off from 1 ms up to
// 50 ms between tries; it starts no goroutine. Waiters across processes are
// therefore not served in arrival order. If ctx ends first, LockFile returns
// ctx.Err() and holds nothing; it also returns ctx.Err() without trying if
// ctx has already ended.
//
// The lock is held until unlock is called or the process ends, and nothing
// else: a caller that keeps the lock for the life of the process may drop
// unlock, and the garbage collector will not release the lock behind its
// back. The kernel releases the lock when the process exits or is killed,
// so a crashed holder never leaves a stale lock and no timeout is needed.
// The descriptor is close-on-exec: child processes do not inherit the lock.
// Locks are per open file: two LockFile calls on one path exclude each
// other even within one process.
//
// unlock releases the lock and closes the file. It is idempotent and safe
// for concurrent use: every call returns the result of the first.
func LockFile(ctx context.Context, path string) (unlock func() error, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fd, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("mutex: LockFile: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	var timer *time.Timer
	for wait := minPoll; ; wait = min(2*wait, maxPoll) {
		err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			closeFd(fd)
			return nil, &os.PathError{Op: "mutex: flock", Path: path, Err: err}
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			closeFd(fd)
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	var unlockErr error
	return func() error {
		once.Do(func() {
			err := flock(fd, syscall.LOCK_UN)
			if cerr := closeFd(fd); err == nil {
				err = cerr
			}
			if err != nil {
				unlockErr = fmt.Errorf("mutex: unlock %s: %w", path, err)
			}
		})
		return unlockErr
	}, nil
}

// open opens path for LockFile, creating it if missing, and returns a bare
// descriptor rather than an *os.File. An *os.File closes its descriptor
// when the garbage collector finds it unreachable, and closing the
// descriptor releases the flock: a caller that dropped unlock would lose
// the lock while it still runs. A bare descriptor has no finalizer, so only
// unlock or the end of the process closes it.
func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// closeFd closes fd. It does not retry on EINTR: on Linux the descriptor
// is released even then, and a retry could close one reused meanwhile.
func closeFd(fd int) error {
	return syscall.Close(fd)
}

// flock calls flock(2), retrying when a signal interrupts it.
func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}
