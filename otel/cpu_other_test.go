//go:build !unix

package pacerotel_test

import "time"

// cpuTime returns 0 where getrusage(2) is missing: cpu-ns/op reads 0.
func cpuTime() time.Duration { return 0 }
