package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// lease_free_lanes and ack_last_lanes (migration 016), and their _v2 (018),
// write the rows that lease_lanes and ack_lanes (014) write, and return
// what they return: each set runs on the same state, each call rolled
// back before the next, and the keys, lanes, counts and values left
// compared, with the calls' moment, their deadlines and their fences
// (from the sequence after the state's) written as names. Each case is
// one the new functions handle with their own statements, not by calling
// the old ones.
func TestLanesFreeAndLastWriteWhatTheFunctionsBeforeWrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s := instance(t, schema)
	fn := pgx.Identifier{schema}.Sanitize()
	add := func(key string, vs ...string) {
		require.NoError(t, s.Add(ctx, "q", key, vals(vs...), store.AddParams{}))
	}
	add("a", "a1", "a2", "a3", "a4", "a5")
	add("b", "b1")
	add("c", "c1", "c2", "c3")
	// d's values, by two Adds, came at two moments: a lease of both says
	// the first's.
	add("d", "d1")
	add("d", "d2")

	// state returns the rows of the schema's tables as text, t and until
	// written as T and U, fences past base as F+n.
	state := func(tx pgx.Tx, t0, until string, base int64) string {
		var out string
		require.NoError(t, tx.QueryRow(ctx, `SELECT replace(replace(concat_ws(E'\n',
			(SELECT string_agg((to_jsonb(k) - 'fence')::text, E'\n' ORDER BY k.key) FROM (SELECT *,
				CASE WHEN fence > $3 THEN 'F+' || (fence - $3) ELSE fence::text END AS f FROM `+fn+`.keys) AS k),
			(SELECT string_agg((to_jsonb(l) - 'fence')::text, E'\n' ORDER BY l.key_hash, l.lo) FROM (SELECT *,
				CASE WHEN fence > $3 THEN 'F+' || (fence - $3) ELSE fence::text END AS f FROM `+fn+`.lanes) AS l),
			(SELECT sum(n)::text FROM `+fn+`.counts), current_setting('pgstore.leases', true),
			(SELECT string_agg(m.key_hash::text || m.seq, ',' ORDER BY m.key_hash, m.seq) FROM `+fn+`.messages AS m)),
			$1, 'T'), $2, 'U')`, t0, until, base).Scan(&out))
		return out
	}
	type call struct {
		name, sql string
		args      []any
	}
	// run runs each call on the state as it is, rolled back after, and
	// returns what each returned and left.
	run := func(calls ...call) []string {
		var got []string
		for _, c := range calls {
			tx, err := pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			_, err = tx.Exec(ctx, "SET LOCAL track_functions = 'pl'")
			require.NoError(t, err)
			// The calls of the functions before, as the session counts
			// them: those of its transactions before too, until it
			// reports them.
			oldCalls := func() (n int) {
				require.NoError(t, tx.QueryRow(ctx, `SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
					WHERE schemaname = $1 AND funcname IN ('lease_lanes', 'ack_lanes')`, schema).Scan(&n))
				return n
			}
			before := oldCalls()
			var base int64
			require.NoError(t, tx.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM `+fn+`.fences`).Scan(&base))
			var t0, until, rows string
			require.NoError(t, tx.QueryRow(ctx, `SELECT to_jsonb(statement_timestamp())::text, to_jsonb(statement_timestamp() + $1::interval)::text,
				coalesce((SELECT string_agg((to_jsonb(r) - 'o_fence' || jsonb_build_object('f', (to_jsonb(r)->>'o_fence')::bigint - $2))::text, E'\n')
					FROM (`+c.sql+`) AS r), '')`, append([]any{ttl, base}, c.args...)...).Scan(&t0, &until, &rows))
			rows = strings.ReplaceAll(strings.ReplaceAll(rows, t0, "T"), until, "U")
			if c.name != "old" {
				require.Equal(t, before, oldCalls(), "the new function ran the old one")
			}
			got = append(got, rows+"\n"+state(tx, t0, until, base))
			require.NoError(t, tx.Rollback(ctx))
		}
		return got
	}
	leases := func(want, maxBatch any, perKey int) []string {
		return run(
			call{"old", `SELECT * FROM ` + fn + `.lease_lanes('q', $3, $4, $1, 'w', $5)`, []any{want, maxBatch, perKey}},
			call{"new", `SELECT * FROM ` + fn + `.lease_free_lanes('q', $3, $4, $1, 'w', $5)`, []any{want, maxBatch, perKey}},
			call{"v2", `SELECT * FROM ` + fn + `.lease_free_lanes_v2('q', $3, $4, $1, 'w', $5)`, []any{want, maxBatch, perKey}},
		)
	}
	for _, c := range []struct {
		want, maxBatch any
		perKey         int
	}{{5, 2, 2}, {2, 2, 2}, {9, 1, 3}, {4, nil, 2}, {0, 1, 2}} {
		got := leases(c.want, c.maxBatch, c.perKey)
		require.Equal(t, got[0], got[1], "want %v, max_batch %v, per_key %d", c.want, c.maxBatch, c.perKey)
		require.Equal(t, got[0], got[2], "v2: want %v, max_batch %v, per_key %d", c.want, c.maxBatch, c.perKey)
	}

	// A lane of each key, and the Acks of those lanes: b's empties it.
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: ttl, PerKey: 2})
	require.NoError(t, err)
	require.Len(t, ls, 3)
	var keys [][]byte
	var fences []int64
	for _, l := range ls {
		keys, fences = append(keys, []byte(l.Key)), append(fences, int64(l.Fence))
	}
	fences = append(fences, fences[0]+100) // a fence not issued
	keys = append(keys, keys[0])
	got := run(
		call{"old", `SELECT * FROM ` + fn + `.ack_lanes('q', $3, $4, $5, 33) WHERE $1::interval IS NOT NULL AND $2::bigint IS NOT NULL`, []any{keys, fences, []int32{1, 0, 2, 1}}},
		call{"new", `SELECT * FROM ` + fn + `.ack_last_lanes('q', $3, $4, $5, 33) WHERE $1::interval IS NOT NULL AND $2::bigint IS NOT NULL`, []any{keys, fences, []int32{1, 0, 2, 1}}},
		call{"v2", `SELECT * FROM ` + fn + `.ack_last_lanes_v2('q', $3, $4, $5, 33) WHERE $1::interval IS NOT NULL AND $2::bigint IS NOT NULL`, []any{keys, fences, []int32{1, 0, 2, 1}}},
	)
	require.Equal(t, got[0], got[1])
	require.Equal(t, got[0], got[2], "v2")
	require.Contains(t, got[0], `{"f": null, "i": 2, "more": false}`, "b's Ack empties b")
	// Acks that end no lane: pgstore.leases says the claim after them
	// takes none.
	got = run(
		call{"old", `SELECT * FROM ` + fn + `.ack_lanes('q', $3, $4, $5, 33) WHERE $1::interval IS NOT NULL AND $2::bigint IS NOT NULL`, []any{keys[3:], fences[3:], []int32{4}}},
		call{"v2", `SELECT * FROM ` + fn + `.ack_last_lanes_v2('q', $3, $4, $5, 33) WHERE $1::interval IS NOT NULL AND $2::bigint IS NOT NULL`, []any{keys[3:], fences[3:], []int32{4}}},
	)
	require.Equal(t, got[0], got[1], "no lane ended")
}
