//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package mutex

import (
	"context"
	"errors"
	"runtime"
)

// LockFile takes an exclusive flock(2) lock on the file at path. flock is
// not available on this system, so LockFile always fails.
func LockFile(ctx context.Context, path string) (unlock func() error, err error) {
	return nil, errors.New("mutex: LockFile is not supported on " + runtime.GOOS)
}
