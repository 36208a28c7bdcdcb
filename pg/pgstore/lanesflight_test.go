package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// The statements of a flight of Acks of lanes (lanesflight.go) write the
// rows that ack_last_lanes and lease_free_lanes (016) write, and return
// what they return: each runs on the same state as the function, the
// first rolled back before the second, and the keys, lanes, counts and
// values left compared, the moments of the calls written as T (now) and U
// (the lease's deadline), the fences past the state's as F+n. The cases
// are those the common statements take themselves, without a function,
// and those they leave to the functions of 014.
func TestLanesFlightWritesWhatTheFunctionsWrite(t *testing.T) {
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

	// norm writes the rows of a JSON object with the transaction's
	// moments as T or U and fences past base as F+n.
	norm := func(row string, start time.Time, base int64) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(row), &m))
		for k, v := range m {
			switch v := v.(type) {
			case string:
				if at, err := time.Parse(time.RFC3339Nano, v); err == nil && !at.Before(start) {
					m[k] = "T"
					if at.After(start.Add(ttl / 2)) {
						m[k] = "U"
					}
				}
			case float64:
				if (k == "fence" || k == "o_fence") && int64(v) > base {
					m[k] = fmt.Sprintf("F+%d", int64(v)-base)
				}
			}
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	// state returns the rows that a statement returned (as JSON objects)
	// and the schema's tables, normalized.
	state := func(tx pgx.Tx, rows []string, start time.Time, base int64) string {
		var out []string
		for _, r := range rows {
			out = append(out, norm(r, start, base))
		}
		slices.Sort(out)
		for _, q := range []string{
			`SELECT to_jsonb(k)::text FROM ` + fn + `.keys AS k ORDER BY k.key`,
			`SELECT to_jsonb(l)::text FROM ` + fn + `.lanes AS l ORDER BY l.key_hash, l.lo`,
			// The leases that the flight's claim takes (see ackLanesCommonSQL).
			`SELECT jsonb_build_object('count', sum(n), 'leases', nullif(current_setting('pgstore.leases', true), '')::integer
				+ greatest(coalesce(nullif(current_setting('pgstore.acked', true), ''), '-1')::integer, 0))::text FROM ` + fn + `.counts`,
			`SELECT jsonb_build_object('values', string_agg(m.key_hash::text || m.seq, ',' ORDER BY m.key_hash, m.seq))::text FROM ` + fn + `.messages AS m`,
		} {
			rs, err := tx.Query(ctx, q)
			require.NoError(t, err)
			for rs.Next() {
				var r string
				require.NoError(t, rs.Scan(&r))
				out = append(out, norm(r, start, base))
			}
			require.NoError(t, rs.Err())
		}
		return strings.Join(out, "\n")
	}
	// run runs the statements of each call in turn on the state as it is,
	// rolled back after, and returns what each call returned and left;
	// it checks whether the call's statements ran a function of 014.
	type stmt struct {
		sql   string
		args  []any
		quiet bool // its rows are not the call's
	}
	type call struct {
		ranOld bool
		stmts  []stmt
	}
	run := func(calls ...call) []string {
		var got []string
		for _, c := range calls {
			tx, err := pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			_, err = tx.Exec(ctx, "SET LOCAL track_functions = 'pl'")
			require.NoError(t, err)
			oldCalls := func() (n int) {
				require.NoError(t, tx.QueryRow(ctx, `SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
					WHERE schemaname = $1 AND funcname IN ('lease_lanes', 'ack_lanes')`, schema).Scan(&n))
				return n
			}
			before := oldCalls()
			var base int64
			var start time.Time
			require.NoError(t, tx.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END, now() FROM `+fn+`.fences`).Scan(&base, &start))
			var rows []string
			for _, st := range c.stmts {
				rs, err := tx.Query(ctx, st.sql, st.args...)
				require.NoError(t, err)
				for rs.Next() {
					if st.quiet {
						continue
					}
					m, err := pgx.RowToMap(rs)
					require.NoError(t, err)
					row := map[string]any{}
					for k, v := range m {
						if k == "i" && v == nil {
							row = nil // the one row of NULLs of no Ack ended
							break
						}
						row[k] = v
					}
					if row != nil {
						b, err := json.Marshal(row)
						require.NoError(t, err)
						rows = append(rows, string(b))
					}
				}
				require.NoError(t, rs.Err())
			}
			require.Equal(t, c.ranOld, oldCalls() > before, "whether a function of 014 ran: %.60s", c.stmts[len(c.stmts)-1].sql)
			got = append(got, state(tx, rows, start, base))
			require.NoError(t, tx.Rollback(ctx))
		}
		return got
	}
	const wantSet = `SELECT set_config('pgstore.leases', $1::integer::text, true), set_config('pgstore.acked', '-1', true)`
	// claim runs lease_free_lanes, then the flight's claim; common: the
	// claim takes it without lease_lanes; free: lease_free_lanes does,
	// which leases more than one batch of a key itself.
	claim := func(want, maxBatch any, perKey int, common, free bool) []string {
		_, _, claimCommon, claimOther := pgstore.LanesFlightSQL(s, 7)
		args := []any{"q", maxBatch, ttl, []byte("w"), perKey}
		return run(
			call{!free, []stmt{{wantSet, []any{want}, true},
				{`SELECT * FROM ` + fn + `.lease_free_lanes('q', $1, $2, $3, 'w', $4)`, []any{want, maxBatch, ttl, perKey}, false}}},
			call{!common, []stmt{{wantSet, []any{want}, true}, {claimCommon, args, false}, {claimOther, args, false}}},
		)
	}
	for _, c := range []struct {
		want, maxBatch any
		perKey         int
		common         bool
	}{{3, 2, 2, true}, {2, 2, 2, true}, {2, nil, 3, true}, {0, 1, 2, true}, {5, 2, 2, true}, {9, 1, 3, true}, {4, nil, 2, true}} {
		got := claim(c.want, c.maxBatch, c.perKey, c.common, true)
		require.Equal(t, got[0], got[1], "want %v, max_batch %v, per_key %d", c.want, c.maxBatch, c.perKey)
	}

	ack := func(keys [][]byte, fences []int64, wants []int32, common bool) []string {
		ackCommon, ackOther, _, _ := pgstore.LanesFlightSQL(s, 7)
		args := []any{"q", keys, fences, wants}
		return run(
			call{!common, []stmt{{`SELECT i, more FROM ` + fn + `.ack_last_lanes('q', $1, $2, $3, 33)`, []any{keys, fences, wants}, false}}},
			call{!common, []stmt{{ackCommon, args, false}, {ackOther, args, false}}},
		)
	}
	// A lane of each key, and the Acks of those lanes: b's empties it; a
	// fence not issued ends nothing.
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: ttl, PerKey: 2})
	require.NoError(t, err)
	require.Len(t, ls, 3)
	var keys [][]byte
	var fences []int64
	for _, l := range ls {
		keys, fences = append(keys, []byte(l.Key)), append(fences, int64(l.Fence))
	}
	got := ack(append(keys, keys[0]), append(fences, fences[0]+100), []int32{1, 0, 2, 1}, true)
	require.Equal(t, got[0], got[1])
	require.Contains(t, got[0], `"more":false`, "b's Ack empties b")
	got = ack(keys[:1], fences[:1], []int32{3}, true)
	require.Equal(t, got[0], got[1])

	// A second lane of a: its Acks, and the claims of keys of lanes, go to
	// the functions of 014.
	more, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, PerKey: 2})
	require.NoError(t, err)
	require.Len(t, more, 1)
	require.Equal(t, "a", more[0].Key)
	got = ack([][]byte{keys[0], []byte("a")}, []int64{fences[0], int64(more[0].Fence)}, []int32{1, 1}, false)
	require.Equal(t, got[0], got[1])
	got = ack([][]byte{keys[0], keys[2]}, []int64{fences[0], fences[2]}, []int32{1, 1}, false)
	require.Equal(t, got[0], got[1])
	for _, c := range []struct {
		want, maxBatch any
		perKey         int
	}{{3, 2, 2}, {1, 1, 2}} {
		got := claim(c.want, c.maxBatch, c.perKey, false, false)
		require.Equal(t, got[0], got[1], "want %v, max_batch %v, per_key %d", c.want, c.maxBatch, c.perKey)
	}
}
