//go:build unix

package pacerotel_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process used so far, in user and system
// mode, every thread together: a figure that, unlike the wall clock, other
// work on a shared machine barely moves.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
