package timing

import (
	"math"
	"math/big"
	"testing"
	"time"
)

func TestAddNanos(t *testing.T) {
	for _, c := range []struct {
		a    int64
		d    time.Duration
		want int64
	}{
		{0, 0, 0},
		{1, time.Second, 1 + int64(time.Second)},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{math.MaxInt64 - 1, 2, math.MaxInt64},
		{time.Now().UnixNano(), math.MaxInt64, math.MaxInt64},
		{math.MinInt64 + 1, -2, math.MinInt64},
		{-1, math.MinInt64, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1},
	} {
		if got := AddNanos(c.a, c.d); got != c.want {
			t.Errorf("AddNanos(%d, %d) = %d, want %d", c.a, c.d, got, c.want)
		}
	}
}

// FuzzAddNanos checks AddNanos against exact arithmetic, clamped.
func FuzzAddNanos(f *testing.F) {
	for _, a := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64, time.Now().UnixNano()} {
		for _, d := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64} {
			f.Add(a, d)
		}
	}
	lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	f.Fuzz(func(t *testing.T, a, d int64) {
		exact := new(big.Int).Add(big.NewInt(a), big.NewInt(d))
		switch {
		case exact.Cmp(hi) > 0:
			exact = hi
		case exact.Cmp(lo) < 0:
			exact = lo
		}
		if got := AddNanos(a, time.Duration(d)); got != exact.Int64() {
			t.Fatalf("AddNanos(%d, %d) = %d, want %d", a, d, got, exact.Int64())
		}
	})
}
