//go:build unix && !linux

package redisstore_test

import (
	"os"
	"syscall"
)

// stopSelf stops the process with SIGSTOP, and returns once it was
// continued. The process may run on for a moment after the call, until
// the signal stops every thread.
func stopSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
