package redisstore_test

import (
	"runtime"
	"syscall"
)

// stopSelf stops the process with SIGSTOP, and returns once it was
// continued. The signal goes to the calling thread, which stops before it
// runs another instruction of the process, and all the others with it: a
// signal sent to the process may be taken by another thread, and let the
// caller run on for a moment.
func stopSelf() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}
