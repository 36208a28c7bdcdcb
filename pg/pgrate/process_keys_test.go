package pgrate_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// The children in mode "keys": childCallers goroutines each call TakeKey
// childTakes times, over childKeys keys of a Keyed of Burst childKeyBurst
// that refills one per 10 s, so that each process's calls share flights.
const childKeys, childCallers, childTakes, childKeyBurst = 4, 8, 5, 5

// keysChild prints how many tokens of each key TakeKey took, separated by
// spaces.
func keysChild(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	k, err := pgrate.NewKeyed(ctx, pool, pgrate.KeyedConfig{Rate: 0.1, Burst: childKeyBurst, Name: "procs-keys", Schema: schema, SweepEvery: -1})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var got [childKeys]int
	var firstErr error
	var wg sync.WaitGroup
	for i := range childCallers {
		wg.Go(func() {
			for j := range childTakes {
				key := (i + j) % childKeys
				w, err := k.TakeKey(ctx, "k"+strconv.Itoa(key))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				} else if err == nil && w == 0 {
					got[key]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Println(strings.Trim(fmt.Sprint(got), "[]"))
	return nil
}

// TestProcessesShareKeyBudgets: three OS processes, each with calls of
// TakeKey at once over 4 keys of Burst 5, asking for far more, get
// exactly 5 of each key between them, and never deadlock.
func TestProcessesShareKeyBudgets(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.1, Name: "procs-keys", Schema: schema}) // migrates the schema before the children
	var totals [childKeys]int
	for i, out := range runChildren(t, "keys", schema) {
		require.Len(t, out, childKeys, "child %d", i)
		for key, f := range out {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			totals[key] += n
		}
	}
	for key, n := range totals {
		require.Equal(t, childKeyBurst, n, "key %d", key)
	}
}
