package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// firstNames keeps the max least of names given in any order, as sorting
// them all and taking the first max does.
func TestFirstNames(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 100, 1000} {
		for _, max := range []int{1, 2, 7, 101} {
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("k%04d", r.IntN(2*n+1)*7%(2*n+1)) + fmt.Sprint(i)
			}
			f := firstNames{max: max}
			for _, name := range names {
				if f.wants(name) {
					f.add(name)
				}
			}
			want := slices.Clone(names)
			slices.Sort(want)
			got := f.sorted()
			require.True(t, slices.Equal(want[:min(max, n)], got), "n %d, max %d: %q", n, max, got)
		}
	}
}
