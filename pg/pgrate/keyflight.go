package pgrate

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/internal/flight"
)

// The Allows of one Keyed value share round trips once more than
// maxFlying come at the same time, whatever their keys (see package
// internal/flight): an Allow alone runs the allow statement, as it would
// without this; several go as one run of the allowKeys statement, which
// takes one event of each of their keys as allow would, in one
// transaction. Unlike a Bucket's calls, which queue for one row's lock,
// the calls of a Keyed write different rows, so what they share is the
// round trip and the transaction: its ID, its commit, and the turns of a
// server process.

// keyFlights shares the takes of a Keyed's Allows (and of its Waits'
// first tries, which are Allows) between keys, and those of its TakeKey
// calls: a TakeKey alone runs rate_try, several one rate_tries (migration
// 004), which takes each key's event as rate_try would, in one
// transaction.
type keyFlights struct {
	group flight.Group[[]byte, bool]
	tries flight.Group[[]byte, time.Duration] // of TakeKey, the same way
	one   *remote                             // the Keyed's pool and shape; its key is not used
}

func newKeyFlights(k *Keyed) *keyFlights {
	f := &keyFlights{one: &remote{pool: k.pool, s: k.s}}
	f.group = flight.Group[[]byte, bool]{MaxFlying: maxFlying, One: f.allow, Many: f.allowKeys}
	f.tries = flight.Group[[]byte, time.Duration]{MaxFlying: maxFlying, One: f.try, Many: f.tryKeys}
	return f
}

// try runs rate_try for one key, taking, and returns how long until its
// event conforms: 0 if it was taken.
func (f *keyFlights) try(ctx context.Context, key []byte) (time.Duration, error) {
	r := remote{pool: f.one.pool, s: f.one.s, key: key}
	now, at, err := r.try(ctx, true)
	return max(at.Sub(now), 0), err
}

// tryKeys runs rate_tries for keys, which takes each key's event as try
// would, one after another in their order, and returns what try would
// for each. A key may come more than once.
func (f *keyFlights) tryKeys(ctx context.Context, keys [][]byte) ([]time.Duration, error) {
	rows, err := f.one.pool.Query(ctx, f.one.s.q.tries, f.one.s.nameArg, f.one.s.keyed, keys, f.one.s.interval, f.one.s.span)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, len(keys))
	got := 0
	var pos int64
	var now, at time.Time
	_, err = pgx.ForEachRow(rows, []any{&pos, &now, &at}, func() error {
		if pos < 1 || pos > int64(len(keys)) {
			return fmt.Errorf("rate_tries returned position %d for %d keys", pos, len(keys))
		}
		out[pos-1] = max(at.Sub(now), 0)
		got++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if got != len(keys) {
		return nil, fmt.Errorf("rate_tries returned %d rows for %d keys", got, len(keys))
	}
	return out, nil
}

// allow runs the allow statement for one key and reports whether it took
// its event.
func (f *keyFlights) allow(ctx context.Context, key []byte) (bool, error) {
	r := remote{pool: f.one.pool, s: f.one.s, key: key}
	t, err := r.take(ctx, 0)
	return !t.refused, err
}

// allowKeys runs the allowKeys statement for keys and reports, for each,
// whether it took its event. The statement takes each key once, so a key
// that comes n times goes in n statements, each with the keys not yet
// asked for; almost always there is one.
func (f *keyFlights) allowKeys(ctx context.Context, keys [][]byte) ([]bool, error) {
	taken := make([]bool, len(keys))
	asked := make([]bool, len(keys))
	for left := len(keys); left > 0; {
		var batch [][]byte
		var at []int
		for i, key := range keys {
			if !asked[i] && !slices.ContainsFunc(batch, func(b []byte) bool { return bytes.Equal(b, key) }) {
				batch, at = append(batch, key), append(at, i)
			}
		}
		rows, err := f.one.pool.Query(ctx, f.one.s.q.allowKeys, f.one.s.nameArg, f.one.s.keyed, batch, f.one.s.interval, f.one.s.span)
		if err != nil {
			return nil, err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			asked[i] = true
			taken[i] = slices.ContainsFunc(got, func(k []byte) bool { return bytes.Equal(k, batch[j]) })
		}
		left -= len(at)
	}
	return taken, nil
}

// keyedServer is one key's server for a call of Keyed.Allow or
// Keyed.Wait: its remote, whose takes of an event now go through the
// Keyed's flights.
type keyedServer struct {
	*remote
	flights *keyFlights
}

// take implements server.
func (s keyedServer) take(ctx context.Context, most time.Duration) (turn, error) {
	if most != 0 {
		return s.remote.take(ctx, most)
	}
	ok, err := s.flights.group.Do(ctx, s.key)
	return turn{refused: !ok}, err
}
