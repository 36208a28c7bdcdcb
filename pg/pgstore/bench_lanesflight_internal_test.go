//go:build linux

package pgstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestMeasureLanesFlightStatements measures, in one session, the server
// CPU of a flight of Acks as runFlight sends it (sharedfinish.go): the
// Acks of the 8 leases of the flight before and a claim of 8 leases, in
// one batch and transaction, on one schema of 500 keys of 10 values, with
// MaxBatch 2. The forms: PerKey 1 (finishAcksSQL and the shared claim),
// and PerKey 2 by the functions of migration 016 (lease_free_lanes,
// ack_last_lanes) and of 018 (their _v2). Each form runs
// PACER_BENCH_FLIGHTS (200) flights a turn, its leases acked at the
// turn's end, the forms in turn, their order turned each round, for
// PACER_BENCH_ROUNDS (8) rounds; the queue is vacuumed before each turn,
// and filled again by two INSERTs, untimed, when it runs dry. The CPU is
// the session's server process's (/proc/PID/schedstat: the server runs on
// this machine), read around each 20 flights. PACER_BENCH_FORM=i runs the
// i-th form alone (from 0), to profile the server; PACER_BENCH_LANES_SQL
// names a file of functions to try as one more form.
func TestMeasureLanesFlightStatements(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	rounds, flights := benchRounds(8), 200
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_FLIGHTS")); err == nil && n > 0 {
		flights = n
	}
	ctx := context.Background()
	s, pool := internalStore(t)
	fn := pgx.Identifier{s.cfg.Schema}.Sanitize()
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	cpu := serverCPU(t, ctx, conn)
	const keys, per, want = 500, 10, 8
	// fill adds per values to each of keys keys, by one statement (the
	// queue is empty, its keys gone): the measurement is of the flights.
	fill := func() {
		_, err := conn.Exec(ctx, strings.ReplaceAll(`
			INSERT INTO {s}.keys (queue, key_hash, key, tail, ready_at)
			SELECT 'q', sha256(('k' || i)::bytea), ('k' || i)::bytea, $2, statement_timestamp() + i * interval '1 microsecond'
			FROM generate_series(1, $1::integer) AS i`, "{s}", fn), keys, per)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, strings.ReplaceAll(`
			INSERT INTO {s}.messages (queue, key_hash, seq, value, added_at)
			SELECT 'q', sha256(('k' || i)::bytea), n, '"0123456789abcd"'::bytea, statement_timestamp()
			FROM generate_series(1, $1::integer) AS i, generate_series(0, $2::integer - 1) AS n`, "{s}", fn), keys, per)
		require.NoError(t, err)
	}
	type form struct {
		name, ack, claim string
		perKey           bool
	}
	lanes16 := func(sql string) string {
		return strings.NewReplacer("lease_free_lanes_v2(", "lease_free_lanes(", "ack_last_lanes_v2(", "ack_last_lanes(").Replace(sql)
	}
	forms := []form{
		{"PerKey 1", s.q.finishAcks, s.claimSQL(claimForm{keys: want, shared: true}), false},
		{"PerKey 2, 016", lanes16(s.q.finishLanes), lanes16(s.q.claimLanesShared), true},
		{"PerKey 2, 018", s.q.finishLanes, s.q.claimLanesShared, true},
	}
	require.Contains(t, forms[2].claim, fn+".lease_free_lanes_v2(")
	if file := os.Getenv("PACER_BENCH_LANES_SQL"); file != "" {
		// A form of the functions to try: the file's statements make
		// lease_try and ack_try, of the arguments of lease_free_lanes and
		// ack_last_lanes, in the schema, which stays the session's
		// search_path.
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SET search_path = "+fn+"; "+string(b))
		require.NoError(t, err)
		try := strings.NewReplacer("lease_free_lanes_v2(", "lease_try(", "ack_last_lanes_v2(", "ack_try(")
		forms = append(forms, form{"PerKey 2, file", try.Replace(s.q.finishLanes), try.Replace(s.q.claimLanesShared), true})
	}
	if only := os.Getenv("PACER_BENCH_FORM"); only != "" { // one form alone, by its index
		i, err := strconv.Atoi(only)
		require.NoError(t, err)
		forms = forms[i : i+1]
	}
	var (
		held   [][]byte
		fences []int64
	)
	// flight acks what is held and leases up to n; it reports whether it
	// leased any.
	flight := func(f form, n int) bool {
		var b pgx.Batch
		wants := slices.Repeat([]int32{0}, len(held))
		if len(wants) > 0 {
			wants[0] = int32(n)
		}
		if len(held) > 0 {
			b.Queue(f.ack, "q", held, fences, wants)
		} else {
			// Nothing to ack: the claim takes n, as the flight's Acks
			// would have it.
			b.Queue("SELECT set_config('pgstore.leases', $1::text, true)", strconv.Itoa(n))
		}
		args := []any{"q", int64(2), interval(time.Minute), []byte("w")}
		if f.perKey {
			args = append(args, 2)
		}
		var leased [][]byte
		var leasedFences []int64
		b.Queue(f.claim, args...).Query(func(rows pgx.Rows) error {
			ls, _, err := scanClaim("q", rows)
			for _, l := range ls {
				fence, _ := fenceOf(l)
				leased, leasedFences = append(leased, []byte(l.Key)), append(leasedFences, fence)
			}
			return err
		})
		require.NoError(t, conn.SendBatch(ctx, &b).Close())
		held, fences = leased, leasedFences
		return len(held) > 0
	}
	fill()
	for _, f := range forms { // the session plans their statements
		flight(f, 0)
		for range 20 {
			if !flight(f, want) {
				fill()
			}
		}
		flight(f, 0)
	}
	got := make(map[string][]time.Duration)
	for r := range rounds {
		for i := range forms {
			f := forms[(i+r)%len(forms)]
			// Each turn from a vacuumed queue: the dead entries of keys_ready
			// that a turn leaves, which the claims after step over, not
			// charged to the next.
			_, err := conn.Exec(ctx, "VACUUM "+fn+".keys, "+fn+".lanes, "+fn+".messages")
			require.NoError(t, err)
			var took time.Duration
			for done := 0; done < flights; {
				c0 := cpu()
				n := 0
				for ; n < 20 && flight(f, want); n++ {
				}
				took += cpu() - c0
				done += n
				if n < 20 {
					fill() // the queue ran dry
				}
			}
			flight(f, 0)
			got[f.name] = append(got[f.name], took/time.Duration(flights))
		}
	}
	for _, f := range forms {
		c := got[f.name]
		var ratios []float64
		for i := range c {
			ratios = append(ratios, float64(c[i])/float64(got[forms[0].name][i]))
		}
		slices.Sort(ratios)
		c = slices.Sorted(slices.Values(c))
		fmt.Printf("%-14s server CPU a flight: median %v (%v-%v); against %s, round by round: %.3f (%.3f-%.3f)\n", f.name,
			c[len(c)/2].Round(time.Microsecond), c[0].Round(time.Microsecond), c[len(c)-1].Round(time.Microsecond),
			forms[0].name, ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
	}
}
