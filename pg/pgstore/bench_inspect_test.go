package pgstore_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestMeasureKeysPage times pages of 100 keys of a queue of 10^6 keys
// (PACER_INSPECT_KEYS sets another number): without a filter, with a
// state filter that most keys pass (ready), that 1 key in 1000 passes
// (held, which has an index of its own), and that 10 keys pass (leased,
// which reads 2,000 keys a page), with a prefix that 1 key in 1000
// starts with (2,000 keys read a page too), and with that prefix and a
// state. It walks 20 pages of each from the queue's start, and prints the
// median and the slowest, and times Key, Values and Queues, beside the
// SELECT 1 floor of the same run. The queue is filled with one INSERT ...
// SELECT in a schema of its own.
func TestMeasureKeysPage(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("PACER_INSPECT_KEYS")); err == nil {
		n = v
	}
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	q := pgx.Identifier{schema}.Sanitize()
	t0 := time.Now()
	// Keys "tenant-TTTT/user-NNNNNNNN" for N from 1 to n, of tenant N
	// modulo 1000: 1000 keys held, one per tenant (N from 7000 to 7999),
	// 10 leased (N from 5000 to 5009), the rest ready, in the order of N.
	_, err = pool.Exec(ctx, `
		INSERT INTO `+q+`.keys (queue, key_hash, key, tail, ready_at, held, held_at, leased_at, leased_until, fence, holder)
		SELECT 'q', sha256(k.key), k.key, 1,
			CASE WHEN i BETWEEN 7000 AND 7999 THEN NULL WHEN i BETWEEN 5000 AND 5009 THEN now() + interval '1 hour'
				ELSE now() - interval '1 hour' + i * interval '1 microsecond' END,
			i BETWEEN 7000 AND 7999,
			CASE WHEN i BETWEEN 7000 AND 7999 THEN now() END,
			CASE WHEN i BETWEEN 5000 AND 5009 THEN now() END,
			CASE WHEN i BETWEEN 5000 AND 5009 THEN now() + interval '1 hour' END,
			CASE WHEN i BETWEEN 5000 AND 5009 THEN i ELSE 0 END,
			CASE WHEN i BETWEEN 5000 AND 5009 THEN 'instance-1'::bytea END
		FROM generate_series(1, $1::integer) AS i,
			LATERAL (SELECT convert_to('tenant-' || lpad((i % 1000)::text, 4, '0') || '/user-' || lpad(i::text, 8, '0'), 'UTF8') AS key) AS k`, n)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `
		INSERT INTO `+q+`.messages (queue, key_hash, seq, value, added_at)
		SELECT 'q', key_hash, 0, '"0123456789abcd"', now() - interval '1 hour' FROM `+q+`.keys`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".keys, "+q+".messages")
	require.NoError(t, err)
	serial, _ := select1Floor(t, pool)
	fmt.Printf("keys page: filled %d keys in %v; SELECT 1 floor %.0f/s serial (%v each)\n",
		n, time.Since(t0).Round(time.Second), serial, time.Duration(float64(time.Second)/serial).Round(time.Microsecond))

	for _, c := range []struct {
		name string
		q    store.KeyQuery
	}{
		{"no filter", store.KeyQuery{}},
		{"state ready", store.KeyQuery{State: store.Ready}},
		{"state held (1 in 1000)", store.KeyQuery{State: store.Held}},
		{"state leased (10 keys)", store.KeyQuery{State: store.Leased}},
		{"prefix (1 in 1000)", store.KeyQuery{Prefix: "tenant-0042/"}},
		{"prefix and state ready", store.KeyQuery{Prefix: "tenant-0042/", State: store.Ready}},
	} {
		var times []time.Duration
		keys := 0
		for range 20 {
			start := time.Now()
			page, err := s.Keys(ctx, "q", c.q)
			times = append(times, time.Since(start))
			require.NoError(t, err)
			keys += len(page.Keys)
			if page.Next == "" {
				break
			}
			c.q.Cursor = page.Next
		}
		slices.Sort(times)
		fmt.Printf("keys page of 100, %d keys, %-24s %2d pages, %4d keys: median %v, slowest %v\n",
			n, c.name+":", len(times), keys, times[len(times)/2].Round(10*time.Microsecond), times[len(times)-1].Round(10*time.Microsecond))
	}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Key", func() error { _, _, err := s.Key(ctx, "q", "tenant-0042/user-00500042"); return err }},
		{"Values", func() error { _, err := s.Values(ctx, "q", "tenant-0042/user-00500042", 100); return err }},
		{"Queues", func() error { _, err := s.Queues(ctx); return err }},
	} {
		var times []time.Duration
		for range 5 {
			start := time.Now()
			require.NoError(t, c.call())
			times = append(times, time.Since(start))
		}
		slices.Sort(times)
		fmt.Printf("%s, %d keys: median %v, slowest %v\n", c.name, n, times[len(times)/2].Round(10*time.Microsecond), times[len(times)-1].Round(10*time.Microsecond))
	}
}
