package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/internal/enginetest"
)

// postgresURL is the PostgreSQL the -postgres test uses.
func postgresURL() string { return enginetest.PostgresURL() }

// postgresConn connects to postgresURL for tb, and closes the connection
// after it. It skips tb when no server answers, unless CI=true, where it
// fails.
func postgresConn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, postgresURL())
	if err != nil {
		enginetest.Missing(tb, fmt.Sprintf("hook0-fifo: no PostgreSQL at %s (%s); start one or set PACER_POSTGRES_URL to run the -postgres test",
			postgresURL(), strings.Join(strings.Fields(err.Error()), " ")))
	}
	tb.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// freshSchema returns a schema name of its own for tb, dropped after it
// with the schema of the dispatcher's numbering.
func freshSchema(tb testing.TB, conn *pgx.Conn) string {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "hook0_test_" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, s := range []string{schema, schema + numberingSuffix} {
			if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE"); err != nil {
				tb.Errorf("dropping schema %s: %v", s, err)
			}
		}
	})
	return schema
}

// TestDemoPostgres runs the demo as `go run . -postgres URL` does, on
// loopback and the real clock, with both Runners' queues in PostgreSQL:
// every check of the in-process demo holds, and the dead letters are rows
// of the store's table.
func TestDemoPostgres(t *testing.T) {
	conn := postgresConn(t)
	schema := freshSchema(t, conn)
	var out bytes.Buffer
	// 30 events: two of them go to legacy, which dead-letters both.
	err := run(t.Context(), []string{"-postgres", postgresURL(), "-schema", schema, "-events", "30"}, &out)
	t.Log("\n" + out.String())
	require.NoError(t, err)
	require.Contains(t, out.String(), "queues in PostgreSQL, schema "+schema)
	require.NotContains(t, out.String(), "FAIL")
	require.Equal(t, 5, strings.Count(out.String(), "\n  ok   "), "the five checks of the demo")
	// OnDrop gave up legacy's two messages, and Runner.DeadLetters reads
	// two back from the store...
	require.Regexp(t, `dead letters \(2\):\n  legacy +#1 .*\n  legacy +#2 .*\n  the store keeps 2 dead letters in all \(Runner.DeadLetters\)\n`, out.String())

	// ...which are those very messages, in order, in the table; and
	// nothing else is left in the queues.
	ctx := t.Context()
	s := pgx.Identifier{schema}.Sanitize()
	rows, err := conn.Query(ctx, "SELECT queue, convert_from(key, 'UTF8'), (convert_from(vals[1], 'UTF8')::jsonb->>'seq')::int FROM "+s+".dead_letters ORDER BY id")
	require.NoError(t, err)
	type letter struct {
		queue, key string
		seq        int
	}
	letters, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (letter, error) {
		var l letter
		err := r.Scan(&l.queue, &l.key, &l.seq)
		return l, err
	})
	require.NoError(t, err)
	require.Len(t, letters, 2)
	for i, l := range letters {
		require.Equal(t, letter{fifoQueue, "legacy", i + 1}, l)
	}
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM "+s+".messages").Scan(&left))
	require.Zero(t, left, "every message was delivered or dead-lettered")
}

// A message that one dispatcher published and another retries (after a
// restart, or beside it on the same schema) gets the schedule's attempts
// in all, counted by the store, and then goes to the dead letters: the
// second dispatcher's tracker never saw it and cannot count them.
func TestPostgresAttemptsOutliveTheProcess(t *testing.T) {
	conn := postgresConn(t)
	schema := freshSchema(t, conn)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, num, closeStore, err := openPostgres(ctx, postgresURL(), schema, 2)
	require.NoError(t, err)
	defer closeStore()

	rc := newReceiver(receiverConfig{Broken: map[string]bool{"legacy": true}})
	retry := schedule{Fast: 3, FastDelay: time.Millisecond, Slow: 2, SlowDelay: 2 * time.Millisecond}
	cfg := dispatcherConfig{
		Subs:  []subscription{{Name: "legacy", URL: "http://hooks.invalid/hooks/legacy", Types: []string{"*"}, FIFO: true}},
		Retry: retry, FIFOWorkers: 1, Workers: 1, Timeout: time.Second,
		Transport: hookhttp.InProcess{Handler: rc}, Store: st, Numbering: num,
	}
	first, err := newDispatcher(cfg)
	require.NoError(t, err)
	n, err := first.publish(ctx, Event{ID: "evt_1", Type: "customer.deleted"})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, first.shutdown(ctx), "the message stays in the store")

	second, err := newDispatcher(cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- second.run(ctx) }()
	for {
		second.track.mu.Lock()
		dead, changed := second.track.stats("legacy").dead, second.track.changed
		second.track.mu.Unlock()
		if dead > 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			boxes, _, _ := rc.snapshot()
			require.FailNow(t, "the message never reached the dead letters", "receiver saw %d requests", len(boxes["legacy"].requests))
		}
	}
	require.NoError(t, second.shutdown(ctx))
	require.NoError(t, <-done)

	dls, err := second.fifo.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, dls, 1)
	require.Equal(t, retry.attempts(), dls[0].Attempt)
	boxes, _, _ := rc.snapshot()
	require.Equal(t, []uint64{1, 1, 1, 1, 1, 1}, boxes["legacy"].requests, "all %d attempts, no more", retry.attempts())
}

// With a Store, a handler call that panicked sent nothing and uses no
// attempt of the schedule, though the store counts it: the message is
// still sent all its attempts, then dead-lettered.
func TestPostgresPanicUsesNoAttempt(t *testing.T) {
	conn := postgresConn(t)
	schema := freshSchema(t, conn)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, num, closeStore, err := openPostgres(ctx, postgresURL(), schema, 2)
	require.NoError(t, err)
	defer closeStore()

	rc := newReceiver(receiverConfig{Broken: map[string]bool{"legacy": true}})
	retry := schedule{Fast: 3, FastDelay: time.Millisecond, Slow: 2, SlowDelay: 2 * time.Millisecond}
	d, err := newDispatcher(dispatcherConfig{
		Subs:  []subscription{{Name: "legacy", URL: "http://hooks.invalid/hooks/legacy", Types: []string{"*"}, FIFO: true}},
		Retry: retry, FIFOWorkers: 1, Workers: 1, Timeout: time.Second,
		Transport: hookhttp.InProcess{Handler: rc}, Store: st, Numbering: num,
	})
	require.NoError(t, err)
	var panicked atomic.Bool
	d.beforeSend = func(message) {
		if panicked.CompareAndSwap(false, true) {
			panic("template is nil")
		}
	}
	done := make(chan error, 1)
	go func() { done <- d.run(ctx) }()
	_, err = d.publish(ctx, Event{ID: "evt_1", Type: "customer.deleted"})
	require.NoError(t, err)
	require.NoError(t, d.track.waitIdle(ctx))
	require.NoError(t, d.shutdown(ctx))
	require.NoError(t, <-done)

	require.Equal(t, []msgID{{"legacy", 1}}, d.track.snapshot().panics, "recovered")
	dls, err := d.fifo.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, dls, 1)
	require.Equal(t, retry.attempts()+1, dls[0].Attempt, "the store counts the call that panicked")
	boxes, _, _ := rc.snapshot()
	require.Equal(t, []uint64{1, 1, 1, 1, 1, 1}, boxes["legacy"].requests, "all %d attempts, no more", retry.attempts())
	require.Equal(t, retry.attempts(), d.track.snapshot().letters[0].Attempts)
}

// Dispatchers that share a store number a subscription's messages in one
// sequence, in the order its queue keeps them: the receiver's order proof
// holds for messages published by different processes.
func TestPostgresNumbersAcrossDispatchers(t *testing.T) {
	conn := postgresConn(t)
	schema := freshSchema(t, conn)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, num, closeStore, err := openPostgres(ctx, postgresURL(), schema, 2)
	require.NoError(t, err)
	defer closeStore()

	rc := newReceiver(receiverConfig{})
	cfg := dispatcherConfig{
		Subs:  []subscription{{Name: "orders", URL: "http://hooks.invalid/hooks/orders", Types: []string{"*"}, FIFO: true}},
		Retry: schedule{Fast: 1, FastDelay: time.Millisecond}, FIFOWorkers: 1, Workers: 1, Timeout: time.Second,
		Transport: hookhttp.InProcess{Handler: rc}, Store: st, Numbering: num,
	}
	a, err := newDispatcher(cfg)
	require.NoError(t, err)
	b, err := newDispatcher(cfg)
	require.NoError(t, err)
	for i := range 6 {
		d := []*dispatcher{a, b}[i%2]
		_, err := d.publish(ctx, Event{ID: fmt.Sprint("evt_", i+1), Type: "order.paid"})
		require.NoError(t, err)
	}
	require.NoError(t, a.shutdown(ctx), "a never ran: b delivers everything")

	done := make(chan error, 1)
	go func() { done <- b.run(ctx) }()
	require.NoError(t, b.track.waitIdle(ctx), "b's messages, the last one included")
	require.NoError(t, b.shutdown(ctx))
	require.NoError(t, <-done)

	boxes, _, _ := rc.snapshot()
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, boxes["orders"].accepted)
	require.Empty(t, boxes["orders"].fifoViolation())
}
