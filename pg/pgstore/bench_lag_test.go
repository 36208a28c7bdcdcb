package pgstore_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store/storetest"
)

// The lag from ready to handler start while the workers are idle
// (storetest.ReadyLag): 1,000 values added with no debounce to an idle
// Runner of 2 workers, 3 ms apart, each timed from Add's return (its
// commit) to its handler's start; the Add's notification wakes the
// waiting worker. The target is a p99 under 5 ms.
func TestMeasureReadyLag(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	const n = 1000
	p50, p99, top := storetest.ReadyLag(t, s, "q", n)
	fmt.Printf("ready-to-start lag, %d values: p50 %v, p99 %v, max %v (SELECT 1 p50 %v)\n", n, p50, p99, top, select1Time(t, pool, 1000))
}

// select1Time returns the median of n serial SELECT 1 round trips.
func select1Time(t *testing.T, pool *pgxpool.Pool, n int) time.Duration {
	ds := make([]time.Duration, n)
	var one int
	for i := range ds {
		t0 := time.Now()
		require.NoError(t, pool.QueryRow(t.Context(), "SELECT 1").Scan(&one))
		ds[i] = time.Since(t0)
	}
	p50, _, _ := storetest.Quantiles(ds)
	return p50
}
