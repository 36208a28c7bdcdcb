package pgrate

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/ratelimit"
)

var _ ratelimit.KeyGate[string] = (*Keyed)(nil)

// TakeKey takes one event of key if it may happen now, in every process
// sharing the Keyed, and returns 0; otherwise it takes nothing, writes
// nothing, and returns how long until it may, by the server's clock: the
// ratelimit.KeyGate that a pacer Runner's Config.KeyLimit takes, so that
// a key without a token is put aside rather than waited on. One round
// trip (rate_try, migration 003), holding key's row lock for the
// decision only; the TakeKey calls of a Keyed that come at once,
// whatever their keys, share round trips and a transaction (rate_tries,
// migration 004, see keyflight.go), each decided as it would be alone,
// and hold their keys' row locks until that transaction ends. A sweep
// that is due runs after it, as after Allow. A server error is returned
// wrapped with the Keyed's Name and the key; the Keyed's FailOpen does
// not apply.
func (k *Keyed) TakeKey(ctx context.Context, key string) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b := k.bucket(key)
	d, err := k.flights.tries.Do(ctx, b.srv.(keyedServer).key)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, b.fail("TakeKey", err)
	}
	b.sweepIfDue(ctx)
	return d, nil
}

// PeekKey returns what TakeKey would, and takes nothing; see
// ratelimit.KeyGate. One round trip that neither locks nor writes, and
// makes no row for a key that has none.
func (k *Keyed) PeekKey(ctx context.Context, key string) (time.Duration, error) {
	return k.peek(ctx, key)
}

// PauseKeyFor is PauseKey, for ratelimit.KeyGate, which checks ctx
// first even when d <= 0 asks nothing.
func (k *Keyed) PauseKeyFor(ctx context.Context, key string, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return k.PauseKey(ctx, key, d)
}

func (k *Keyed) peek(ctx context.Context, key string) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b := k.bucket(key)
	now, at, err := b.srv.(keyedServer).try(ctx, false)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, b.fail("PeekKey", err)
	}
	return max(at.Sub(now), 0), nil
}
