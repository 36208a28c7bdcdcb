package fifo

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGroupsPerKeyRefused(t *testing.T) {
	_, err := NewGroups[int, int](GroupsConfig{PerKey: -1})
	require.ErrorContains(t, err, "GroupsConfig.PerKey")
}

// A key that just got a lease goes behind the keys already waiting, though
// it may take another; a key whose lease ended goes to the tail too.
func TestGroupsPerKeyFairness(t *testing.T) {
	g, err := NewGroups[string, int](GroupsConfig{PerKey: 2, MaxBatch: 1})
	require.NoError(t, err)
	defer g.Close(nil)
	require.NoError(t, g.Put("k", 1, 2, 3))
	require.NoError(t, g.Put("a", 4))
	require.NoError(t, g.Put("b", 5))
	k1 := mustLease(t, g)
	require.Equal(t, []int{1}, k1.Messages)
	require.Equal(t, "a", mustLease(t, g).Key)
	require.Equal(t, "b", mustLease(t, g).Key)
	k2 := mustLease(t, g)
	require.Equal(t, []int{2}, k2.Messages)
	info, _ := g.Key("k", 10)
	require.Equal(t, KeyInfo{State: KeyLeased, Messages: 3, Attempt: 1, Leases: 2}, info)
	require.NoError(t, g.Put("c", 6))
	require.True(t, g.Ack(k2), "1 and 3 are left")
	require.Equal(t, "c", mustLease(t, g).Key, "c was waiting when k's lease ended")
	k3 := mustLease(t, g)
	require.Equal(t, []int{3}, k3.Messages)
	require.True(t, g.Ack(k3))
	require.False(t, g.Ack(k1))
}

// Workers that lease and ack at once never hold more than PerKey leases
// of a key, and every message is leased once.
func TestGroupsPerKeyConcurrent(t *testing.T) {
	const perKey, keys, per = 3, 4, 200
	g, err := NewGroups[int, int](GroupsConfig{PerKey: perKey, MaxBatch: 2})
	require.NoError(t, err)
	var (
		mu   sync.Mutex
		out  = map[int]int{}
		seen = map[int]bool{}
		most int
		wg   sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				l, err := g.Get(context.Background())
				if err != nil {
					return
				}
				mu.Lock()
				out[l.Key]++
				most = max(most, out[l.Key])
				for _, m := range l.Messages {
					assert.False(t, seen[m], "message %d leased twice", m)
					seen[m] = true
				}
				mu.Unlock()
				runtime.Gosched() // let the other workers lease meanwhile
				mu.Lock()
				out[l.Key]--
				retry := w%3 == 0 && l.Attempt == 1
				if retry {
					for _, m := range l.Messages {
						delete(seen, m) // leased again after the Retry
					}
				}
				mu.Unlock()
				if retry {
					g.Retry(l, 0)
					continue
				}
				g.Ack(l)
			}
		}()
	}
	for i := range per {
		for k := range keys {
			require.NoError(t, g.Put(k, k*per+i))
		}
	}
	require.NoError(t, g.ShutDownWithDrain(context.Background()))
	wg.Wait()
	require.LessOrEqual(t, most, perKey)
	require.Len(t, seen, keys*per)
	require.Zero(t, g.Stats().Messages)
}
