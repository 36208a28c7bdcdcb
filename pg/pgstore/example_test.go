package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// A service stores an event and the work it calls for in one transaction:
// the delivery is queued if and only if the event was stored.
func ExampleStore_AddTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	s, err := pgstore.New(ctx, pool, pgstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO events (id, body) VALUES ($1, $2)", 42, "..."); err != nil {
			return err
		}
		// Deliver event 42 to subscription 7, in order with its other events.
		return s.AddTx(ctx, tx, "deliveries", "subscription-7", [][]byte{[]byte("42")}, store.AddParams{})
	})
	if err != nil {
		log.Fatal(err)
	}
}
