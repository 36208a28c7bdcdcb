package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// forever is the shortest duration the scripts take as "for ever": any
// deadline past a century saturates to never.
const forever = 100 * 365 * 24 * time.Hour

// micros is d in whole microseconds of the server's clock, rounded up, 0
// for d <= 0 and -1 (for ever) for d >= forever.
func micros(d time.Duration) int64 {
	switch {
	case d <= 0:
		return 0
	case d >= forever:
		return -1
	}
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}

// fromMicros is the duration of us microseconds, store.Never for -1.
func fromMicros(us int64) time.Duration {
	if us < 0 || us >= int64(forever/time.Microsecond) {
		return 1<<63 - 1
	}
	return time.Duration(us) * time.Microsecond
}

// unstamp splits a stored value, "<time added>:<value>", or
// "<time added>@<time due>:<value>" for one added with a Delay, into the
// time added and the value.
func unstamp(e string) (time.Time, []byte, error) {
	i := strings.IndexByte(e, ':')
	if i < 0 {
		return time.Time{}, nil, fmt.Errorf("stored value without its time: %.20q", e)
	}
	added := e[:i]
	if j := strings.IndexByte(added, '@'); j >= 0 {
		added = added[:j]
	}
	us, err := strconv.ParseInt(added, 10, 64)
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("stored value with a bad time: %.20q", e)
	}
	return time.UnixMicro(us), []byte(e[i+1:]), nil
}
