package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgstore"
)

// Event is what the service of Example_outbox stores and delivers.
type Event struct {
	ID   int64
	Body string
}

// The outbox pattern with a Runner: a service stores an event and queues
// its delivery in one transaction, so that the delivery exists if and
// only if the event was stored. The Runners of every process sharing the
// schema then deliver each subscription's events in order, at least once.
func Example_outbox() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	st, err := pgstore.New(ctx, pool, pgstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	r, err := pacer.New(pacer.Config[string, Event]{Store: st, Name: "deliveries", MaxBatch: 1, Workers: 8},
		func(ctx context.Context, subscription string, batch []Event) error {
			return deliver(ctx, subscription, batch[0]) // an error retries it, before the next
		})
	if err != nil {
		log.Fatal(err)
	}
	go r.Run(ctx) //nolint:errcheck // ends with Shutdown

	ev := Event{ID: 42, Body: "..."}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO events (id, body) VALUES ($1, $2)", ev.ID, ev.Body); err != nil {
			return err
		}
		return r.AddTx(ctx, tx, "subscription-7", ev) // a pgx.Tx: pgstore's kind
	})
	if err != nil {
		log.Fatal(err) // neither the event nor its delivery was stored
	}
	if err := r.Shutdown(ctx); err != nil {
		log.Print(err)
	}
}

func deliver(context.Context, string, Event) error { return nil }
