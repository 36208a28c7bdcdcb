package pacer_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// tenantOfKey is the tenant of the keys of these tests: the part before "/".
func tenantOfKey(k string) string { return k[:strings.IndexByte(k, '/')] }

// tenantRun adds a keys of tenant A, then b of tenant B, one value each,
// runs a Runner of cfg on them with a handler that takes
// 10 ms, and returns the keys in the order handled, once n were.
func tenantRun(t *testing.T, cfg pacer.Config[string, int], a, b, n int) []string {
	t.Helper()
	var (
		mu   sync.Mutex
		keys []string
		done = make(chan struct{})
	)
	cfg.Tenant = tenantOfKey
	r, err := pacer.New(cfg, func(ctx context.Context, key string, _ []int) error {
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
		if len(keys) == n {
			close(done)
		}
		return nil
	})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range a {
		require.NoError(t, r.Add(ctx, fmt.Sprintf("A/%05d", i), 1))
	}
	for i := range b {
		require.NoError(t, r.Add(ctx, fmt.Sprintf("B/%05d", i), 1))
	}
	go r.Run(ctx)
	<-done
	require.NoError(t, r.Shutdown(ctx))
	mu.Lock()
	defer mu.Unlock()
	return keys[:n]
}

// turnsOfB returns the keys of tenant B among keys.
func turnsOfB(keys []string) []string {
	var b []string
	for _, k := range keys {
		if tenantOfKey(k) == "B" {
			b = append(b, k)
		}
	}
	return b
}

// TestTenantsTakeTurns: tenant A has 10,000 keys ready, tenant B 10: B's
// all run within the first 20 handler calls, in the process and on a
// Store.
func TestTenantsTakeTurns(t *testing.T) {
	for name, st := range map[string]store.Store{"local": nil, "store": store.NewMemory(store.MemoryConfig{})} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := pacer.Config[string, int]{Workers: 1}
				if st != nil {
					cfg.Store, cfg.Name = st, "turns"
				}
				keys := tenantRun(t, cfg, 10000, 10, 20)
				require.Len(t, turnsOfB(keys), 10, "B's keys among the first 20 calls: %v", keys)
			})
		})
	}
}

// TestTenantWeights: weights 3 and 1 split the turns 3:1 within 5% over
// 4,000 calls.
func TestTenantWeights(t *testing.T) {
	for name, st := range map[string]store.Store{"local": nil, "store": store.NewMemory(store.MemoryConfig{})} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := pacer.Config[string, int]{
					Workers:      2,
					TenantWeight: func(tn string) int { return map[string]int{"A": 3}[tn] },
				}
				if st != nil {
					cfg.Store, cfg.Name = st, "weights"
				}
				keys := tenantRun(t, cfg, 4000, 4000, 4000)
				b := len(turnsOfB(keys))
				require.InDelta(t, 3, float64(len(keys)-b)/float64(b), 0.15, "A %d, B %d", len(keys)-b, b)
			})
		})
	}
}

// plainStore is a Store without FairTenants.
type plainStore struct{ store.Store }

func TestTenantConfigErrors(t *testing.T) {
	h := func(context.Context, string, []int) error { return nil }
	_, err := pacer.New(pacer.Config[string, int]{TenantWeight: func(string) int { return 1 }}, h)
	require.EqualError(t, err, "pacer: Config.TenantWeight needs Config.Tenant")
	_, err = pacer.New(pacer.Config[string, int]{
		Tenant: tenantOfKey,
		Store:  plainStore{store.NewMemory(store.MemoryConfig{})},
		Name:   "q",
	}, h)
	require.EqualError(t, err, "pacer: Config.Tenant needs a Config.Store that implements store.FairTenants, which pacer_test.plainStore does not")
}
