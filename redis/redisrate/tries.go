package redisrate

import (
	"context"
	"fmt"

	"github.com/pacerkit/pacer/internal/flight"
)

// The TakeKey calls of one Keyed value share function calls once more
// than triesFlying come at the same time, whatever their keys (see package
// internal/flight): a call alone goes as try.lua, as it would without
// this; several go as one call of tries.lua, which reads the server's
// clock once and takes each key's event in the order the calls came,
// each as try.lua would. So a Runner's workers, which each take their
// batch's key, make one round trip, and one run of the function's fixed
// part, for several batches.

// triesFlying is how many TakeKey calls of one Keyed fly at once before
// they share them. Unlike a Bucket's takes, which queue for one key on
// the server anyway, TakeKey calls of different keys could all fly at
// once; but each call's fixed part (the function's call, TIME, the MGET)
// costs the server more than a key's own read and write, and a Runner's
// workers take a key per batch: 1 shares the most (see BENCHMARKS.md).
const triesFlying = 1

// newTries returns the group that k's TakeKey calls share.
func newTries(k *Keyed) *flight.Group[string, int64] {
	return &flight.Group[string, int64]{
		MaxFlying: triesFlying,
		One: func(ctx context.Context, key string) (int64, error) {
			tat, pause := k.s.keyedKeys(key)
			return newRemote(k.c, k.s, tat, pause, false).try(ctx, true)
		},
		Many: k.tries,
	}
}

// tries runs tries.lua for keys, in their order, and returns each one's
// delay in microseconds as try does.
func (k *Keyed) tries(ctx context.Context, keys []string) ([]int64, error) {
	cmd := make([]any, 0, 5+2*len(keys))
	cmd = append(cmd, "fcall", triesFn, 2*len(keys))
	for _, key := range keys {
		tat, pause := k.s.keyedKeys(key)
		cmd = append(cmd, tat, pause)
	}
	cmd = append(cmd, k.s.intervalArg, k.s.spanArg)
	v, err := lib.Do(ctx, k.c, cmd...).Int64Slice()
	if err != nil {
		return nil, err
	}
	if len(v) != len(keys) {
		return nil, fmt.Errorf("tries.lua replied %d integers for %d keys", len(v), len(keys))
	}
	return v, nil
}
