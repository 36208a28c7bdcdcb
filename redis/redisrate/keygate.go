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
// trip (try.lua). A Redis error is returned as it is, wrapped with the
// Keyed's name and the key; the Keyed's FailOpen does not apply.
func (k *Keyed) TakeKey(ctx context.Context, key string) (time.Duration, error) {
	return k.try(ctx, "TakeKey", key, true)
}

// PeekKey returns what TakeKey would, and takes nothing; see
// ratelimit.KeyGate. One round trip.
func (k *Keyed) PeekKey(ctx context.Context, key string) (time.Duration, error) {
	return k.try(ctx, "PeekKey", key, false)
}

// PauseKeyFor is PauseKey, for ratelimit.KeyGate.
func (k *Keyed) PauseKeyFor(ctx context.Context, key string, d time.Duration) error {
	return k.PauseKey(ctx, key, d)
}

func (k *Keyed) try(ctx context.Context, op, key string, take bool) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tat, pause := k.s.keyedKeys(key)
	us, err := newRemote(k.c, k.s, tat, pause, false).try(ctx, take)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		b := bucket{s: k.s, key: key, keyed: true}
		return 0, b.fail(op, err)
	}
	return time.Duration(us) * time.Microsecond, nil
}
