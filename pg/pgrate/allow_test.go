package pgrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// TestAllowStatementMatchesModel: Allow's statement, which returns no
// clock, decides as GCRA does at some reading of the server's clock
// between one read just before it and one read just after it, and writes
// the tat that GCRA writes at that reading, read back from the row. When
// the bucket had room, tat pins that reading down: it must be inside the
// bracket and the event must conform at it.
func TestAllowStatementMatchesModel(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	schema := freshSchema(t, pool)
	// 50 a second: an interval much longer than the bracket of two round
	// trips, so that a token given too early falls before the bracket.
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 50, Burst: 3, Name: "model", Schema: schema})
	g := &gcra{interval: pgrate.Interval(l), span: pgrate.Span(l)}
	row := `SELECT tat, clock_timestamp() FROM ` + pgx.Identifier{schema, "rate_buckets"}.Sanitize() +
		` WHERE name = 'model' AND NOT keyed`

	allowed, refused, exact := 0, 0, 0
	for i := range 400 {
		if i%100 == 99 { // let the bucket fill again, on the server's clock
			var now time.Time
			require.NoError(t, pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now))
			time.Sleep(g.tat.Sub(now))
		}
		if i%100 == 50 {
			now, until, err := pgrate.ServerPause(ctx, l, time.Duration(1+i%3)*time.Millisecond)
			require.NoError(t, err)
			require.False(t, now.IsZero(), "a pause past every earlier one changed nothing")
			g.pauseUntil(now, until)
			continue
		}
		var lo, hi, tat time.Time
		require.NoError(t, pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&lo))
		ok, err := l.Allow(ctx)
		require.NoError(t, err)
		require.NoError(t, pool.QueryRow(ctx, row).Scan(&tat, &hi))
		// The event conforms at any reading from latest(pause, tat +
		// interval - span) on.
		from := g.at(time.Time{})
		if !ok {
			refused++
			require.True(t, from.After(lo), "step %d: refused, but GCRA allows from %v, before %v", i, from, lo)
			require.Equal(t, g.tat, tat, "step %d: a refused Allow wrote tat", i)
			continue
		}
		allowed++
		require.False(t, from.After(hi), "step %d: allowed, but GCRA allows only from %v, after %v", i, from, hi)
		if now := tat.Add(-g.interval); now.After(g.tat) { // the bucket had room: tat = now + interval
			exact++
			require.False(t, now.Before(lo) || now.After(hi), "step %d: the clock %v the statement read is outside [%v, %v]", i, now, lo, hi)
			require.False(t, from.After(now), "step %d: allowed at %v, GCRA allows only from %v", i, now, from)
		} else {
			require.Equal(t, g.tat.Add(g.interval), tat, "step %d: tat", i)
			require.False(t, lo.After(g.tat), "step %d: tat did not move as GCRA's would at a reading after %v", i, lo)
		}
		g.tat = tat
	}
	t.Logf("allowed %d (%d with room), refused %d", allowed, exact, refused)
	require.Positive(t, refused, "the sequence never filled the bucket")
	require.Positive(t, exact)
}
