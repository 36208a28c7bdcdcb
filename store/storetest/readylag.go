package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// ReadyLag measures the lag from ready to handler start while the
// workers are idle: n values added with no debounce to an idle Runner of
// queue q on s (2 workers), 3 ms apart, each timed from Add's return to
// its handler's start, after 10 values of warm-up. It returns the lags'
// p50, p99 and max.
func ReadyLag(t testing.TB, s store.Store, q string, n int) (p50, p99, top time.Duration) {
	t.Helper()
	started := make(chan time.Time, 1)
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: q, Workers: 2},
		func(context.Context, string, []int) error { started <- time.Now(); return nil })
	require.NoError(t, err)
	StartRunner(t, r)
	lags := make([]time.Duration, 0, n)
	for i := range n + 10 {
		time.Sleep(3 * time.Millisecond) // the workers are idle again
		require.NoError(t, r.Add(t.Context(), fmt.Sprint(i%50), i))
		added := time.Now()
		if i < 10 {
			<-started
			continue
		}
		lags = append(lags, (<-started).Sub(added))
	}
	return Quantiles(lags)
}

// Quantiles returns the p50, p99 and max of ds, which it sorts.
func Quantiles(ds []time.Duration) (p50, p99, top time.Duration) {
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(int(q*float64(len(ds))), len(ds)-1)] }
	return at(0.50), at(0.99), ds[len(ds)-1]
}
