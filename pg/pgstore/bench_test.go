package pgstore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// The benchmarks measure round trips to the test server, so compare them
// with BenchmarkSelect1, the floor of one round trip, from the same run.

// BenchmarkSelect1 is one round trip that does nothing.
func BenchmarkSelect1(b *testing.B) {
	pool := connect(b, appName(b))
	ctx := context.Background()
	var one int
	for b.Loop() {
		if err := pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdd adds one value per call: to a new key each time (which
// notifies), or to a key that is ready already (which does not); serially,
// and from 8 goroutines on the machine's cores; and with a bound
// (AddParams.MaxValues), which the Adds of a queue check in turn.
func BenchmarkAdd(b *testing.B) {
	pool := connect(b, appName(b))
	s := newStore(b, pool)
	ctx := context.Background()
	v := vals("0123456789abcdef")
	var n atomic.Int64
	var p store.AddParams
	add := func(b *testing.B, key string) {
		if err := s.Add(ctx, "q", key, v, p); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("NewKey", func(b *testing.B) {
		for b.Loop() {
			add(b, fmt.Sprint(n.Add(1)))
		}
	})
	b.Run("ReadyKey", func(b *testing.B) {
		for b.Loop() {
			add(b, "ready")
		}
	})
	b.Run("NewKeyParallel", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				add(b, fmt.Sprint(n.Add(1)))
			}
		})
	})
	b.Run("ReadyKeyParallel", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				add(b, fmt.Sprint(n.Add(1)%1000))
			}
		})
	})
	p.MaxValues = math.MaxInt32
	b.Run("BoundedReadyKey", func(b *testing.B) {
		for b.Loop() {
			add(b, "ready")
		}
	})
	b.Run("BoundedReadyKeyParallel", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				add(b, fmt.Sprint(n.Add(1)%1000))
			}
		})
	})
}

// BenchmarkAddTx is a caller's transaction that inserts a row of its own,
// with and without an AddTx: the difference is AddTx's one statement.
func BenchmarkAddTx(b *testing.B) {
	pool := connect(b, appName(b))
	s := newStore(b, pool)
	ctx := context.Background()
	mine := pgx.Identifier{freshSchema(b, pool)}.Sanitize()
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+mine+"; CREATE TABLE "+mine+".events (id bigint PRIMARY KEY, body bytea)")
	require.NoError(b, err)
	insert := "INSERT INTO " + mine + ".events (id, body) VALUES ($1, $2)"
	v := vals("0123456789abcdef")
	var id atomic.Int64
	tx := func(b *testing.B, enqueue bool) {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			n := id.Add(1)
			if _, err := tx.Exec(ctx, insert, n, v[0]); err != nil {
				return err
			}
			if enqueue {
				return s.AddTx(ctx, tx, "q", fmt.Sprint(n), v, store.AddParams{})
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("InsertOnly", func(b *testing.B) {
		for b.Loop() {
			tx(b, false)
		}
	})
	b.Run("InsertAndAddTx", func(b *testing.B) {
		for b.Loop() {
			tx(b, true)
		}
	})
}

// BenchmarkClaim is the latency of one Claim of one value, with a small
// backlog and with a large one, every key ready: a Claim's cost must follow
// the keys that are ready, not the values behind them. Each lease is
// deferred back, untimed, so the backlog stays as it was. The large backlog
// is 10^6 values over 10^5 keys, built with COPY in a few seconds.
func BenchmarkClaim(b *testing.B) {
	for _, size := range []struct{ keys, per int }{{10, 10}, {100_000, 10}} {
		b.Run(fmt.Sprintf("Values=%d/Keys=%d", size.keys*size.per, size.keys), func(b *testing.B) {
			pool := connect(b, appName(b))
			schema := freshSchema(b, pool)
			s, err := pgstore.New(context.Background(), pool, pgstore.Config{Schema: schema})
			require.NoError(b, err)
			defer s.Close()
			backlog(b, pool, schema, "q", size.keys, size.per)
			ctx := context.Background()
			p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
			for b.Loop() {
				ls, _, err := s.Claim(ctx, "q", p)
				if err != nil || len(ls) != 1 {
					b.Fatal(len(ls), err)
				}
				b.StopTimer()
				if _, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Defer}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkThroughput is 2 processes of 4 workers each, on a store of their
// own each, working 20,000 values over 1,000 keys with a no-op handler,
// one value per lease, claiming one key per Claim or several; it reports
// values/s. Each worker ends its leases with Finish and then claims, or,
// with FinishAndClaim, ends its last lease and claims in one call, as a
// Runner's worker does.
func BenchmarkThroughput(b *testing.B) {
	for _, chain := range []bool{false, true} {
		for _, keys := range []int{1, 4} {
			name := fmt.Sprintf("KeysPerClaim=%d", keys)
			if chain {
				name = "FinishAndClaim/" + name
			}
			b.Run(name, func(b *testing.B) {
				throughput(b, store.ClaimParams{Keys: keys, MaxBatch: 1, TTL: time.Minute}, chain)
			})
		}
	}
}

// throughput runs BenchmarkThroughput with p, chaining with FinishAndClaim
// if chain.
func throughput(b *testing.B, p store.ClaimParams, chain bool) {
	const keys, per, procs, workers = 1000, 20, 2, 4
	pool := connect(b, appName(b))
	schema := freshSchema(b, pool)
	stores := make([]*pgstore.Store, procs)
	for i := range stores {
		s, err := pgstore.New(context.Background(), connect(b, appName(b)), pgstore.Config{Schema: schema})
		require.NoError(b, err)
		defer s.Close()
		stores[i] = s
	}
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		backlog(b, pool, schema, "q", keys, per)
		b.StartTimer()
		start := time.Now()
		var left atomic.Int64
		left.Store(keys * per)
		var wg sync.WaitGroup
		for _, s := range stores {
			for range workers {
				wg.Go(func() {
					var ls []store.Lease
					for left.Load() > 0 || len(ls) > 0 {
						var next time.Duration
						if len(ls) == 0 {
							var err error
							if ls, next, err = s.Claim(ctx, "q", p); err != nil {
								b.Error(err)
								return
							}
						}
						last := len(ls) - 1
						for i, l := range ls {
							var err error
							if chain && i == last {
								_, ls, next, err = s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
							} else {
								_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
							}
							if err != nil {
								b.Error(err)
								return
							}
							left.Add(-1)
						}
						if !chain {
							ls = nil
						}
						if len(ls) == 0 && left.Load() > 0 {
							if err := s.Wait(ctx, "q", min(next, 10*time.Millisecond)); err != nil {
								b.Error(err)
								return
							}
						}
					}
				})
			}
		}
		wg.Wait()
		total += time.Since(start)
	}
	b.ReportMetric(float64(keys*per*b.N)/total.Seconds(), "values/s")
}

// backlog fills queue with keys keys of per values each, all ready, with
// COPY into the store's tables, and analyzes them. Each value is 16 bytes,
// a JSON string, which a pacer Runner of strings decodes.
func backlog(tb testing.TB, pool *pgxpool.Pool, schema, queue string, keys, per int) {
	tb.Helper()
	fill(tb, pool, schema, queue, keys, per)
	s := pgx.Identifier{schema}.Sanitize()
	_, err := pool.Exec(context.Background(), "VACUUM ANALYZE "+s+".keys, "+s+".messages")
	require.NoError(tb, err)
}

// fill is backlog without the analysis: the server's statistics of the
// tables stay as they were.
func fill(tb testing.TB, pool *pgxpool.Pool, schema, queue string, keys, per int) {
	tb.Helper()
	ctx := context.Background()
	base := time.Now().Add(-time.Hour)
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%07d", i)) }
	hash := func(i int) []byte { h := sha256.Sum256(key(i)); return h[:] }
	_, err := pool.CopyFrom(ctx, pgx.Identifier{schema, "keys"},
		[]string{"queue", "key_hash", "key", "head", "tail", "ready_at"},
		pgx.CopyFromSlice(keys, func(i int) ([]any, error) {
			return []any{queue, hash(i), key(i), int64(0), int64(per), base.Add(time.Duration(i) * time.Microsecond)}, nil
		}))
	require.NoError(tb, err)
	_, err = pool.CopyFrom(ctx, pgx.Identifier{schema, "messages"},
		[]string{"queue", "key_hash", "seq", "value", "added_at"},
		pgx.CopyFromSlice(keys*per, func(i int) ([]any, error) {
			return []any{queue, hash(i / per), int64(i % per), []byte(`"0123456789abcd"`), base}, nil
		}))
	require.NoError(tb, err)
}
