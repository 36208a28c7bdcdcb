//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pacerkit/pacer/mutex"
)

// lockQueue takes the lock file of the queue directory dir, waiting up to
// a second: a flock(2) lock, which the kernel releases when the process
// ends, kill -9 included, so a crashed run never leaves a stale lock.
func lockQueue(dir string) (unlock func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if unlock, err = mutex.LockFile(ctx, filepath.Join(dir, lockName)); err != nil {
		return nil, fmt.Errorf("queue %s is in use by another process: %w", dir, err)
	}
	return unlock, nil
}
