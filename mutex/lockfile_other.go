//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package mutex

import (
	"context"
	"errors"
	"runtime"
)

// LockFile takes an exclusive flock(2) lock on the file at path. It is
// implemented on Unix systems only (Linux, the BSDs, macOS and illumos);
// flock is not available on this system, so LockFile always fails, without
// creating the file.
func LockFile(ctx context.Context, path string) (unlock func() error, err error) {
	return nil, errors.New("mutex: LockFile is not supported on " + runtime.GOOS)
}
