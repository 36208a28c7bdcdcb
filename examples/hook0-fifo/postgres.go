package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store/pgstore"
)

// defaultSchema is the PostgreSQL schema of -postgres unless -schema is set.
const defaultSchema = "hook0_fifo"

// The queue names of the two Runners in the store. Dispatchers that share
// a schema share these queues: their keys, leases, order and dead letters.
const (
	fifoQueue       = "hook0-fifo"
	concurrentQueue = "hook0-concurrent"
)

// openPostgres connects to url and returns a pgstore.Store on schema,
// migrated, and the function that closes it and its pool. workers is how
// many handler calls may finish at once: the pool gets a connection for
// each, one for the store's listener and one for claims and intake.
func openPostgres(ctx context.Context, url, schema string, workers int) (*pgstore.Store, func(), error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, int32(workers+2))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	st, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return st, func() { _ = st.Close(); pool.Close() }, nil
}

// A deadMark is the ID of the last dead letter each Runner's queue held.
type deadMark struct{ fifo, concurrent uint64 }

// storedDead lists the dead letters the Store keeps for both Runners
// after mark, up to maxHistory of them, and returns how many there are
// and the mark after the last. Without a Store it returns
// pacer.ErrNoDeadLetters.
func (d *dispatcher) storedDead(ctx context.Context, mark deadMark) ([]msgID, int, deadMark, error) {
	var ids []msgID
	n := 0
	page := func(r *pacer.Runner[key, message], after *uint64) error {
		for {
			dls, err := r.DeadLetters(ctx, *after, 500)
			if err != nil || len(dls) == 0 {
				return err
			}
			for _, dl := range dls {
				n++
				for _, m := range dl.Values {
					ids = appendCapped(ids, msgID{m.Sub, m.Seq})
				}
			}
			*after = dls[len(dls)-1].ID
		}
	}
	if err := page(d.fifo, &mark.fifo); err != nil {
		return nil, 0, mark, err
	}
	if err := page(d.concurrent, &mark.concurrent); err != nil {
		return nil, 0, mark, err
	}
	return ids, n, mark, nil
}
