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
// both. The pool gets a connection for each of the workers, one for the
// store's listener, one for claims and one for publishing.
func openPostgres(ctx context.Context, url, schema string, workers int) (_ *pgstore.Store, _ *numbering, closeAll func(), err error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, int32(workers+3))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	var st *pgstore.Store
	closeAll = func() {
		if st != nil {
			_ = st.Close()
		}
		pool.Close()
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	if err := pool.Ping(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	if st, err = pgstore.New(ctx, pool, pgstore.Config{Schema: schema}); err != nil {
		return nil, nil, nil, err
	}
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
		return nil, nil, nil, fmt.Errorf("-postgres: making %s: %w", num.table, err)
	}
	return st, num, closeAll, nil
}

// publishTx is publish with a numbering: it numbers ev's messages and
// queues them (pgstore.AddTx) in one transaction, so that dispatchers
// sharing the store number a subscription's messages 1, 2, 3... in the
// order its queue keeps them, across processes and restarts. A
// subscription's counter row stays locked until the commit: its next
// message is numbered, and queued, after. An event is queued to all its
// subscriptions or to none.
func (d *dispatcher) publishTx(ctx context.Context, ev Event) (int, error) {
	var subs []subscription
	for _, s := range d.cfg.Subs {
		if s.matches(ev.Type) {
			subs = append(subs, s)
		}
	}
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
		for _, m := range msgs {
			d.track.lost(m)
		}
		return 0, err
	}
	return len(msgs), nil
}

// A deadMark is the ID of the last dead letter each Runner's queue held.
type deadMark [2]uint64

// storedDead lists the dead letters the Store keeps for both Runners after
// mark, up to maxHistory of them, and returns how many there are and the
// mark after the last.
func (d *dispatcher) storedDead(ctx context.Context, mark deadMark) (ids []msgID, n int, _ deadMark, _ error) {
	for i, r := range []*runner{d.fifo, d.concurrent} {
		for {
			dls, err := r.DeadLetters(ctx, mark[i], 500)
			if err != nil {
				return nil, 0, mark, err
			}
			if len(dls) == 0 {
				break
			}
			for _, dl := range dls {
				n++
				for _, m := range dl.Values {
					ids = appendCapped(ids, msgID{m.Sub, m.Seq})
				}
			}
			mark[i] = dls[len(dls)-1].ID
		}
	}
	return ids, n, mark, nil
}
