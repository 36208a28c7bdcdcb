//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pacerkit/pacer/mutex"
)

// lockName is the lock file that keeps a second process off the queue
// directory: the queue's read-modify-write of an item and the removal of
// temporary files at start are only safe for one process.
const lockName = ".lock"

// lockQueue takes the lock file of the queue directory dir, waiting up to
// a second: a flock(2) lock, which the kernel releases when the process
// ends, kill -9 included, so a crashed run never leaves a stale lock.
func lockQueue(dir string) (unlock func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	unlock, err = mutex.LockFile(ctx, filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("queue %s is in use by another process: %w", dir, err)
	}
	return unlock, nil
}
