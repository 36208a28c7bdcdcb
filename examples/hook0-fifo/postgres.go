package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// The queue names of the two Runners in the store. Dispatchers that share
// a schema share these queues: their keys, leases, order and dead letters.
const (
	fifoQueue       = "hook0-fifo"
	concurrentQueue = "hook0-concurrent"
)

// numberingSuffix names the schema of the dispatcher's own table after the
// store's, which is the store's alone.
const numberingSuffix = "_seq"

// A numbering gives each subscription's messages their sequence numbers in
// PostgreSQL: a row per subscription in a table of its own.
type numbering struct {
	pool  *pgxpool.Pool
	st    *pgstore.Store
	table string // quoted schema.table
}

// openPostgres connects to url and returns a pgstore.Store on schema,
// migrated, the numbering of the messages, and the function that closes
// both. The pool has a connection per worker and three more (the store's
// listener, claims, publishing).
func openPostgres(ctx context.Context, url, schema string, workers int) (*pgstore.Store, *numbering, func(), error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, int32(workers+3))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	st, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	closeAll := func() { _ = st.Close(); pool.Close() }
	s := pgx.Identifier{schema + numberingSuffix}.Sanitize()
	num := &numbering{pool: pool, st: st, table: s + ".sequences"}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Dispatchers that start at once take turns to make the table.
		_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", schema+numberingSuffix)
		if err == nil {
			_, err = tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+s)
		}
		if err == nil {
			_, err = tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+num.table+" (subscription text PRIMARY KEY, seq bigint NOT NULL)")
		}
		return err
	})
	if err != nil {
		closeAll()
		return nil, nil, nil, fmt.Errorf("-postgres: making %s: %w", num.table, err)
	}
	return st, num, closeAll, nil
}

// publishTx numbers ev's messages to subs and queues them (pgstore.AddTx)
// in one transaction: a subscription's counter row stays locked until the
// commit, so dispatchers sharing the store number its messages in the
// order its queue keeps them. An event is queued to all or to none.
func (d *dispatcher) publishTx(ctx context.Context, ev Event, subs []subscription) (int, error) {
	// The rows are locked in name order, whatever the configuration's
	// order, so that two transactions never wait for each other.
	slices.SortFunc(subs, func(a, b subscription) int { return strings.Compare(a.Name, b.Name) })
	if len(subs) == 0 {
		return 0, nil
	}
	var msgs []message
	n := d.cfg.Numbering
	err := pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		var queued []message
		for _, s := range subs {
			m := message{Sub: s.Name, Event: ev, Published: time.Now()}
			err := tx.QueryRow(ctx, "INSERT INTO "+n.table+" AS t VALUES ($1, 1) ON CONFLICT (subscription) DO UPDATE SET seq = t.seq + 1 RETURNING seq", s.Name).Scan(&m.Seq)
			if err != nil {
				return err
			}
			v, err := pacer.JSON[message]{}.Encode(m)
			if err != nil {
				return err
			}
			queue, k := concurrentQueue, messageKey(s.Name, m.Seq)
			if s.FIFO {
				queue, k = fifoQueue, fifoKey(s.Name)
			}
			if err := n.st.AddTx(ctx, tx, queue, string(k), [][]byte{v}, store.AddParams{}); err != nil {
				return err
			}
			queued = append(queued, m)
		}
		for _, m := range queued { // before the commit, after which a worker may start on them
			d.track.published(m)
		}
		msgs = queued
		return nil
	})
	if err != nil {
		for _, m := range msgs { // published, but the commit failed
			d.track.finish(m, pacer.ErrClosed)
		}
		return 0, err
	}
	return len(msgs), nil
}

// storedDead lists the dead letters the Store keeps for both Runners, up
// to maxHistory of them.
func (d *dispatcher) storedDead(ctx context.Context) (ids []msgID, _ error) {
	for _, r := range []*runner{d.fifo, d.concurrent} {
		for after := uint64(0); ; {
			dls, err := r.DeadLetters(ctx, after, 500)
			if err != nil {
				return nil, err
			}
			if len(dls) == 0 {
				break
			}
			for _, dl := range dls {
				for _, m := range dl.Values {
					ids = appendCapped(ids, msgID{m.Sub, m.Seq})
				}
			}
			after = dls[len(dls)-1].ID
		}
	}
	return ids, nil
}

// countDead returns how many dead letters the Store keeps, -1 without one.
func (d *dispatcher) countDead(ctx context.Context) (int, error) {
	if d.cfg.Store == nil {
		return -1, nil
	}
	ids, err := d.storedDead(ctx)
	return len(ids), err
}
