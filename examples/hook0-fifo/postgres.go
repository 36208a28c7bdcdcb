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

// defaultSchema is the PostgreSQL schema of -postgres unless -schema is set.
const defaultSchema = "hook0_fifo"

// The queue names of the two Runners in the store. Dispatchers that share
// a schema share these queues: their keys, leases, order and dead letters.
const (
	fifoQueue       = "hook0-fifo"
	concurrentQueue = "hook0-concurrent"
)

// openPostgres connects to url and returns a pgstore.Store on schema,
// migrated, the numbering of the messages in PostgreSQL, and the function
// that closes the store and the pool. workers is how many handler calls
// may finish at once: the pool gets a connection for each, one for the
// store's listener, one for claims and one for publishing.
func openPostgres(ctx context.Context, url, schema string, workers int) (*pgstore.Store, *numbering, func(), error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, int32(workers+3))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	st, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	num, err := newNumbering(ctx, pool, st, schema+numberingSuffix)
	if err != nil {
		_ = st.Close()
		pool.Close()
		return nil, nil, nil, err
	}
	return st, num, func() { _ = st.Close(); pool.Close() }, nil
}

// numberingSuffix names the schema of the dispatcher's own table after the
// store's: the store's schema is the store's alone.
const numberingSuffix = "_seq"

// A numbering gives each subscription's messages their sequence numbers in
// PostgreSQL, and queues them in the same transaction (pgstore.AddTx), so
// that every dispatcher sharing the store numbers one subscription's
// messages 1, 2, 3... in the order the queue keeps them, across processes
// and restarts. The counter row of a subscription stays locked until the
// transaction commits: the next message is numbered, and queued, after.
type numbering struct {
	pool  *pgxpool.Pool
	st    *pgstore.Store
	table string // quoted schema.table
}

func newNumbering(ctx context.Context, pool *pgxpool.Pool, st *pgstore.Store, schema string) (*numbering, error) {
	s := pgx.Identifier{schema}.Sanitize()
	n := &numbering{pool: pool, st: st, table: s + ".sequences"}
	// Dispatchers that start at once take turns to make the table.
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", schema)
		if err == nil {
			_, err = tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+s)
		}
		if err == nil {
			_, err = tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+n.table+" (subscription text PRIMARY KEY, seq bigint NOT NULL)")
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("-postgres: making %s: %w", n.table, err)
	}
	return n, nil
}

// publish numbers and queues ev's messages to subs in one transaction. It
// calls published with each message before the commit, after which a
// worker could start on it, and returns those messages: on an error none
// of them was queued.
func (n *numbering) publish(ctx context.Context, ev Event, subs []subscription, now time.Time, published func(message)) ([]message, error) {
	// Counter rows are locked in name order, whatever a dispatcher's
	// configuration order, so that two transactions never wait for each other.
	subs = slices.SortedFunc(slices.Values(subs), func(a, b subscription) int { return strings.Compare(a.Name, b.Name) })
	var msgs, tracked []message
	err := pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		for _, s := range subs {
			m := message{Sub: s.Name, Event: ev, Published: now}
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
			msgs = append(msgs, m)
		}
		for _, m := range msgs {
			published(m)
			tracked = append(tracked, m)
		}
		return nil
	})
	return tracked, err
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
