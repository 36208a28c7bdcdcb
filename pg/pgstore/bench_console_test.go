package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/internal/pagetime"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestMeasureConsolePages renders every page of the console over a queue
// of 10^6 keys, 20 times each, and prints each page's p50, p90 and
// slowest render, handler and store calls together. Keys are
// "tenant-TTT/key-NNNNNNN", tenant N modulo 1000, of one value each; one
// in ten debounces, the others are ready, but for 50 held keys and 50
// dropped to dead letters. The queue is filled with INSERT ... SELECT in
// a schema of its own, then vacuumed. The key page is timed twice: with
// pacer.ExplainStored, and with the explanation of a Runner of the queue
// (which the queue's pause keeps from leasing). The target is 300 ms a
// page.
func TestMeasureConsolePages(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	const n, queue = 1_000_000, "big"
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	q := pgx.Identifier{schema}.Sanitize()
	t0 := time.Now()
	_, err = pool.Exec(ctx, `
		INSERT INTO `+q+`.keys (queue, key_hash, key, tail, ready_at, burst, burst_first, burst_due)
		SELECT 'big', sha256(k.key), k.key, 1,
			CASE WHEN i % 10 = 0 THEN now() + interval '1 hour' ELSE now() - interval '1 hour' + i * interval '1 microsecond' END,
			CASE WHEN i % 10 = 0 THEN 1 ELSE 0 END,
			CASE WHEN i % 10 = 0 THEN now() END,
			CASE WHEN i % 10 = 0 THEN now() + interval '1 hour' END
		FROM generate_series(0, $1::integer - 1) AS i,
			LATERAL (SELECT convert_to('tenant-' || lpad((i % 1000)::text, 3, '0') || '/key-' || lpad(i::text, 7, '0'), 'UTF8') AS key) AS k`, n)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `
		INSERT INTO `+q+`.messages (queue, key_hash, seq, value, added_at)
		SELECT 'big', key_hash, 0, '{"id":1,"kind":"invoice"}', now() - interval '1 hour' FROM `+q+`.keys`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO `+q+`.counts (queue, slot, n) VALUES ('big', 0, $1)`, n)
	require.NoError(t, err)
	holdAndDrop(t, s, queue, 100)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".keys, "+q+".messages, "+q+".dead_letters")
	require.NoError(t, err)
	st, err := s.Stats(ctx, queue)
	require.NoError(t, err)
	require.Equal(t, n-50, st.Keys) // the dropped keys hold nothing
	require.Equal(t, 50, st.Held)
	fmt.Printf("console pages over pgstore: %d keys added in %v\n", st.Keys, time.Since(t0).Round(time.Millisecond))

	allow := func(*http.Request, console.Action) error { return nil }
	h, err := console.New(console.Config{Store: s, Authorize: allow})
	require.NoError(t, err)
	worst := pagetime.Table(t, os.Stdout, h, pagetime.Pages(queue, "tenant-042/key-0500042", "tenant-042/"), 20)

	_, err = s.PauseQueue(ctx, queue)
	require.NoError(t, err)
	r, err := pacer.New(pacer.Config[string, map[string]any]{Store: s, Name: queue},
		func(context.Context, string, []map[string]any) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(context.Background())
	h, err = console.New(console.Config{Store: s, Runners: []pacer.RunnerView{r.View()}, Authorize: allow})
	require.NoError(t, err)
	worst = max(worst, pagetime.Table(t, os.Stdout, h, []pagetime.Page{
		{Name: "key, the Runner's explanation", Path: "/key?queue=" + queue + "&key=tenant-042/key-0500042"},
	}, 20))
	fmt.Printf("the slowest p90: %.1f ms\n", float64(worst)/float64(time.Millisecond))
}

// holdAndDrop claims the first n ready keys of queue one at a time and
// holds every other one, dropping the rest to dead letters.
func holdAndDrop(t *testing.T, s store.Store, queue string, n int) {
	t.Helper()
	for i := range n {
		ls, _, err := s.Claim(context.Background(), queue, store.ClaimParams{Keys: 1, TTL: time.Hour})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		kind := store.Hold
		if i%2 == 0 {
			kind = store.Drop
		}
		_, err = s.Finish(context.Background(), ls[0], store.Outcome{Kind: kind, Err: "measurement"})
		require.NoError(t, err)
	}
}
