package pgrate

import (
	"context"
	"time"
)

// Take runs l's take statement (not the allow statement) once, taking an event unless its delay
// would be more than most (most < 0: any), and returns its reply: whether
// it was refused, else its delay, the server's clock it read and the tat
// it wrote.
func Take(ctx context.Context, l *Bucket, most time.Duration) (refused bool, delay time.Duration, now, tat time.Time, err error) {
	t, err := l.b.srv.(*flights).takeServer.(*remote).takeRow(ctx, most)
	return t.refused, t.delay, t.now, t.tat, err
}

// ServerPause runs l's pause statement once and returns the server's
// clock it read and the pause's end, both zero if it changed nothing.
func ServerPause(ctx context.Context, l *Bucket, d time.Duration) (now, until time.Time, err error) {
	return l.b.srv.(*flights).takeServer.(*remote).pause(ctx, d)
}

// Interval and Span return the interval and span of l's bucket, as the
// statements take them.
func Interval(l *Bucket) time.Duration { return l.b.s.interval }
func Span(l *Bucket) time.Duration     { return l.b.s.span }

// Takes runs rate_takes once for l's bucket, one event per element of
// most, and returns each one's reply as Take does.
func Takes(ctx context.Context, l *Bucket, most []time.Duration) (refused []bool, delay []time.Duration, now, tat []time.Time, err error) {
	ts, err := l.b.srv.(*flights).takeServer.(*remote).takes(ctx, most)
	for _, t := range ts {
		refused, delay, now, tat = append(refused, t.refused), append(delay, t.delay), append(now, t.now), append(tat, t.tat)
	}
	return refused, delay, now, tat, err
}

// TryKey runs rate_try once for key's bucket of k, taking the event if
// take is set and it conforms now, and returns the server's clock it read
// and the instant the event conforms.
func TryKey(ctx context.Context, k *Keyed, key string, take bool) (now, at time.Time, err error) {
	return k.bucket(key).srv.(keyedServer).try(ctx, take)
}

// ServerPauseKey runs the pause statement once for key's bucket of k and
// returns what ServerPause does.
func ServerPauseKey(ctx context.Context, k *Keyed, key string, d time.Duration) (now, until time.Time, err error) {
	return k.bucket(key).srv.(keyedServer).pause(ctx, d)
}

// KeyedInterval and KeyedSpan return the interval and span of k's buckets.
func KeyedInterval(k *Keyed) time.Duration { return k.s.interval }
func KeyedSpan(k *Keyed) time.Duration     { return k.s.span }

// AllowKeys runs k's allowKeys statement, as a flight of Allows of keys
// does, and returns whether each took its event.
func AllowKeys(ctx context.Context, k *Keyed, keys ...string) ([]bool, error) {
	bs := make([][]byte, len(keys))
	for i, key := range keys {
		bs[i] = []byte(key)
	}
	return k.flights.allowKeys(ctx, bs)
}
