package pgstore_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestClaimRacesAdd: values added while workers lease and ack the same few
// keys are all handled, once, in order. A Claim that locks a key row whose
// Add committed after the Claim's snapshot must not lease values it cannot
// see.
func TestClaimRacesAdd(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	const keys, adders, workers = 2, 3, 4
	run := 2 * time.Second
	if testing.Short() {
		run = 500 * time.Millisecond
	}
	end := time.Now().Add(run)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		added   = map[string]int{} // values per key, by adder, numbered 0..
		handled = map[string][]string{}
		errs    []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for a := range adders {
		wg.Go(func() {
			for i := 0; time.Now().Before(end); i++ {
				key := fmt.Sprintf("%d/%d", a, i%keys)
				if err := s.Add(ctx, "q", key, vals(strconv.Itoa(i/keys)), store.AddParams{}); err != nil {
					fail(err)
					return
				}
				mu.Lock()
				added[key]++
				mu.Unlock()
			}
		})
	}
	var working sync.WaitGroup
	stop := make(chan struct{})
	for range workers {
		working.Go(func() {
			for {
				ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, TTL: ttl})
				if err != nil {
					fail(err)
					return
				}
				for _, l := range ls {
					mu.Lock()
					for _, v := range l.Values {
						handled[l.Key] = append(handled[l.Key], string(v))
					}
					mu.Unlock()
					if _, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack}); err != nil {
						fail(err)
						return
					}
				}
				if len(ls) == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	working.Wait()
	require.Empty(t, errs)
	for key, n := range added {
		want := make([]string, n)
		for i := range want {
			want[i] = strconv.Itoa(i)
		}
		require.Equal(t, want, handled[key], "values of key %s", key)
	}
}
