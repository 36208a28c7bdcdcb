package pgstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// keyRatePaths are the claim paths of pgstore, each of which keeps a
// KeyRate: the plain claim, the claims of a queue with tenants, and those
// of keys of lanes (PerKey > 1), with and without tenants.
var keyRatePaths = []struct {
	name   string
	tenant string
	perKey int
}{
	{name: "plain"},
	{name: "tenants", tenant: "t"},
	{name: "lanes", perKey: 2},
	{name: "lanes with tenants", tenant: "t", perKey: 2},
}

// On every claim path, by Claim and by FinishAndClaim: a key takes Burst
// leases, then one without a token is deferred (Deferred, no attempt
// counted, until its token is due) and the claim leases the next ready
// key in its place; a key without a token that is alone says when its
// token is due.
func TestKeyRateOnEveryClaimPath(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	s := instance(t, schema)
	for _, path := range keyRatePaths {
		for _, viaFinish := range []bool{false, true} {
			name := path.name + "/Claim"
			if viaFinish {
				name = path.name + "/FinishAndClaim"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				q := t.Name()
				p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, PerKey: path.perKey,
					KeyRate: store.KeyRate{Interval: time.Hour}}
				add := store.AddParams{Tenant: path.tenant}
				// next acks l and claims, by FinishAndClaim or by Finish and
				// then Claim.
				next := func(l store.Lease) ([]store.Lease, time.Duration) {
					t.Helper()
					if viaFinish {
						_, ls, next, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
						require.NoError(t, err)
						return ls, next
					}
					_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
					require.NoError(t, err)
					ls, next, err := s.Claim(ctx, q, p)
					require.NoError(t, err)
					return ls, next
				}
				require.NoError(t, s.Add(ctx, q, "a", vals("a1", "a2"), add))
				require.NoError(t, s.Add(ctx, q, "b", vals("b1", "b2"), add))
				ls, _, err := s.Claim(ctx, q, p)
				require.NoError(t, err)
				require.Len(t, ls, 1)
				require.Equal(t, vals("a1"), ls[0].Values)
				ls, _ = next(ls[0])
				require.Len(t, ls, 1)
				require.Equal(t, vals("b1"), ls[0].Values)
				require.NoError(t, s.Add(ctx, q, "c", vals("c1"), add))

				// a, then c, then b are ready; a has no token: the claim
				// defers it and leases c in its place.
				ls, _ = next(ls[0])
				require.Len(t, ls, 1, "the next ready key in the place of the one without a token")
				require.Equal(t, vals("c1"), ls[0].Values)
				info, ok, err := s.Key(ctx, q, "a")
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, store.Deferred, info.State, "a waits for its token")
				require.True(t, info.ForToken, "a waits for its token")
				require.WithinDuration(t, time.Now().Add(time.Hour), info.Until, 10*time.Second,
					"a's token is due at T - (Burst-1)*Interval: an hour after its lease")

				// b alone is ready, without a token: the claim defers it, and
				// says when the first token is due.
				none, wait := next(ls[0])
				require.Empty(t, none)
				require.InDelta(t, time.Hour.Seconds(), wait.Seconds(), 10, "the wait for the first token")
				info, ok, err = s.Key(ctx, q, "b")
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, store.Deferred, info.State, "b waits for its token")
				st, err := s.Stats(ctx, q)
				require.NoError(t, err)
				require.Zero(t, st.Leased, "a deferral takes no lease")
			})
		}
	}
}

// A key's T outlives its row in keys, which goes when the key empties: a
// key that empties and gets values again before T passed finds T.
func TestKeyRateOutlivesTheKeysRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s := instance(t, schema)
	p := store.ClaimParams{Keys: 1, TTL: ttl, KeyRate: store.KeyRate{Interval: time.Hour}}
	require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)
	var rows int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+pgstore.SchemaOf(s)+".keys WHERE queue = 'q'").Scan(&rows))
	require.Zero(t, rows, "the key's row went with its last value")

	require.NoError(t, s.Add(ctx, "q", "k", vals("2"), store.AddParams{}))
	none, next, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Empty(t, none, "the key found its T: no token for an hour")
	require.InDelta(t, time.Hour.Seconds(), next.Seconds(), 10)
	info, ok, err := s.Key(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.Deferred, info.State)
	require.True(t, info.ForToken)

	// A key deferred by a Finish is not deferred for its token.
	require.NoError(t, s.Add(ctx, "q", "d", vals("1"), store.AddParams{}))
	ls, _, err = s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, "d", ls[0].Key)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Defer, After: time.Hour})
	require.NoError(t, err)
	info, ok, err = s.Key(ctx, "q", "d")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.Deferred, info.State)
	require.False(t, info.ForToken, "deferred by a Finish")

	// Without a KeyRate, a claim neither reads nor changes T: the key is
	// ready when its deferral ends, as any deferred key.
	none, _, err = s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Empty(t, none)
}

// Migration 015 on a schema that migration 014 made, with keys in it: it
// runs once and again the same, the functions that instances of the
// versions before call stay callable as they were, and claims with and
// without a KeyRate lease the keys.
func TestKeyRateMigrationOnTheSchemaOf014(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	q := pgx.Identifier{schema}.Sanitize()
	files, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	sort.Strings(files)
	var last []byte
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, stmt := range []string{"CREATE SCHEMA " + q, "SET LOCAL search_path TO " + q + ", pg_temp",
			"CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		for _, f := range files {
			name := filepath.Base(f)
			v, err := strconv.Atoi(name[:strings.Index(name, "_")])
			require.NoError(t, err)
			sql, err := os.ReadFile(f)
			require.NoError(t, err)
			if v > 14 {
				last = sql
				continue
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO migrations (version, name) VALUES ($1, $2)", v, name); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, last, "migration 015 is there")
	// A Store of this version runs 015.
	old, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer old.Close()
	require.Contains(t, migrated(t, pool, schema), int32(15))

	// 015 again, as a second run would: the same.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+q+", pg_temp"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, string(last))
		return err
	})
	require.NoError(t, err)

	for _, k := range []string{"a", "b", "c", "d"} {
		require.NoError(t, old.Add(ctx, "q", k, vals(k+"1", k+"2"), store.AddParams{}))
	}
	// The calls of the versions before, by their signatures.
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.lease_lanes('q', 1, 1, '1 minute', 'old', 2) WHERE o_found`).Scan(&n))
	require.Equal(t, 1, n, "lease_lanes of 014")
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.claim_lanes('q', 1, 1, '1 minute', 'old', 2, false) WHERE o_found`).Scan(&n))
	require.Equal(t, 1, n, "claim_lanes of 012")
	ls, _, err := old.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	rated := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, KeyRate: store.KeyRate{Interval: time.Hour}}
	ls, _, err = old.Claim(ctx, "q", rated)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, "d", ls[0].Key)
}

// Claims from several connections at once, each a Store with a pool of
// its own as another process's, lease no key more often than its rate: a
// key takes at most Burst leases plus one per Interval over the run, and
// the claims do take about that many.
func TestKeyRateHoldsAcrossConnections(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := freshSchema(t, connect(t, appName(t)))
	const (
		keys     = 4
		interval = 100 * time.Millisecond
		burst    = 2
		run      = 2 * time.Second
	)
	rate := store.KeyRate{Interval: interval, Burst: burst}
	seed := instance(t, schema)
	for k := range keys {
		vs := make([][]byte, 200)
		for i := range vs {
			vs[i] = []byte(strconv.Itoa(i))
		}
		require.NoError(t, seed.Add(ctx, "q", fmt.Sprint("k", k), vs, store.AddParams{}))
	}
	var (
		mu     sync.Mutex
		leases = map[string]int{}
	)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 4 {
		s := instance(t, schema)
		for w := range 2 {
			wg.Go(func() {
				p := store.ClaimParams{Keys: 1 + w, MaxBatch: 1, TTL: ttl, KeyRate: rate, PerKey: i % 2 * 2}
				for time.Since(start) < run {
					ls, next, err := s.Claim(ctx, "q", p)
					if !assert.NoError(t, err) {
						return
					}
					for _, l := range ls {
						mu.Lock()
						leases[l.Key]++
						mu.Unlock()
						_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
						assert.NoError(t, err)
					}
					if len(ls) == 0 && next > 0 {
						time.Sleep(min(next, 10*time.Millisecond))
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	most := burst + int(elapsed/interval) + 1
	for k := range keys {
		n := leases[fmt.Sprint("k", k)]
		t.Logf("k%d: %d leases in %v (at most %d)", k, n, elapsed, most)
		require.LessOrEqual(t, n, most, "more leases than the rate allows")
		require.GreaterOrEqual(t, n, int(run/interval)/2, "the claims take the key's tokens")
	}
}

// With tenants, a key deferred for its token uses no turn of its tenant:
// the tenant's virtual time stays where it was, on the claims of keys of
// one lease and of keys of lanes.
func TestKeyRateDeferralUsesNoTurn(t *testing.T) {
	t.Parallel()
	for _, perKey := range []int{1, 2} {
		t.Run(fmt.Sprint("PerKey ", perKey), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			pool := connect(t, appName(t))
			schema := freshSchema(t, pool)
			s := instance(t, schema)
			p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, PerKey: perKey, KeyRate: store.KeyRate{Interval: time.Hour}}
			require.NoError(t, s.Add(ctx, "q", "a", vals("a1", "a2"), store.AddParams{Tenant: "A"}))
			ls, _, err := s.Claim(ctx, "q", p)
			require.NoError(t, err)
			require.Len(t, ls, 1)
			_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
			vtime := func() float64 {
				var v float64
				require.NoError(t, pool.QueryRow(ctx, `SELECT vtime FROM `+pgstore.SchemaOf(s)+`.tenants
					WHERE queue = 'q' AND tenant = 'A'`).Scan(&v))
				return v
			}
			before := vtime()
			none, next, err := s.Claim(ctx, "q", p)
			require.NoError(t, err)
			require.Empty(t, none, "a has no token")
			require.Positive(t, next)
			info, _, err := s.Key(ctx, "q", "a")
			require.NoError(t, err)
			require.Equal(t, store.Deferred, info.State)
			require.Equal(t, before, vtime(), "the deferral took no turn of A")
		})
	}
}

// key_rates stays bounded: a Store's first claim with a KeyRate of a
// queue removes the rows of its keys whose T passed, and keeps the others.
func TestKeyRateSweepsWhatPassed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a := instance(t, schema)
	lease := func(key string, every time.Duration) {
		require.NoError(t, a.Add(ctx, "q", key, vals("1"), store.AddParams{}))
		ls, _, err := a.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl, KeyRate: store.KeyRate{Interval: every}})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		_, err = a.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	}
	lease("passes", time.Millisecond)
	lease("stays", time.Hour)
	rates := func() []string {
		rows, err := pool.Query(ctx, `SELECT convert_from(k.key, 'UTF8') FROM `+pgstore.SchemaOf(a)+`.key_rates AS r
			JOIN (VALUES ('passes'::bytea), ('stays'::bytea)) AS k(key) ON sha256(k.key) = r.key_hash
			WHERE r.queue = 'q' ORDER BY 1`)
		require.NoError(t, err)
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return keys
	}
	require.Equal(t, []string{"passes", "stays"}, rates(), "a row per key leased, which outlives the key's row")
	time.Sleep(5 * time.Millisecond)
	b := instance(t, schema)
	_, _, err := b.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl, KeyRate: store.KeyRate{Interval: time.Hour}})
	require.NoError(t, err)
	require.Equal(t, []string{"stays"}, rates(), "the row whose T passed went")
}
