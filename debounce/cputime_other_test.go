//go:build !unix

package debounce

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
