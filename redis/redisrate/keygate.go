package redisrate

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/ratelimit"
)

var _ ratelimit.KeyGate[string] = (*Keyed)(nil)

// TakeKey takes one event of key if it may happen now, in every process
// sharing the Keyed, and returns 0; otherwise it takes nothing and
// returns how long until it may, by the server's clock: the
// ratelimit.KeyGate that a pacer Runner's Config.KeyLimit takes, so that
// a key without a token is put aside rather than waited on. One round
// trip (try.lua); the TakeKey calls of a Keyed that come at once,
// whatever their keys, share round trips (tries.lua, see tries.go), each
// decided as it would be alone, in the order they came. A Redis error is
// returned as it is, wrapped with the Keyed's name and the key; the
// Keyed's FailOpen does not apply.
func (k *Keyed) TakeKey(ctx context.Context, key string) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	us, err := k.takes.Do(ctx, key)
	return k.answer(ctx, "TakeKey", key, us, err)
}

// PeekKey returns what TakeKey would, and takes nothing; see
// ratelimit.KeyGate. One round trip (try.lua) of its own: it writes
// nothing, so sharing TakeKey's would save the server little.
func (k *Keyed) PeekKey(ctx context.Context, key string) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tat, pause := k.s.keyedKeys(key)
	us, err := newRemote(k.c, k.s, tat, pause, false).try(ctx, false)
	return k.answer(ctx, "PeekKey", key, us, err)
}

// PauseKeyFor is PauseKey, for ratelimit.KeyGate.
func (k *Keyed) PauseKeyFor(ctx context.Context, key string, d time.Duration) error {
	return k.PauseKey(ctx, key, d)
}

// answer turns what op on key got from Redis, a delay in microseconds or
// an error, into its result.
func (k *Keyed) answer(ctx context.Context, op, key string, us int64, err error) (time.Duration, error) {
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		b := bucket{s: k.s, key: key, keyed: true}
		return 0, b.fail(op, err)
	}
	return time.Duration(us) * time.Microsecond, nil
}
