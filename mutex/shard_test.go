package mutex

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShardsReleaseMemoryWhenIdle holds enough keys for every shard to
// spill into its map, far past shrinkPeak, then checks that unlocking them
// all leaves no per-key memory behind: no used slot, no key kept in a
// slot, no spill map.
func TestShardsReleaseMemoryWhenIdle(t *testing.T) {
	var m Keyed[string]
	const n = 4 * numShards * shrinkPeak
	key := func(i int) string { return string(rune('a'+i%26)) + string(rune(i)) }
	for i := range n {
		m.Lock(key(i))
	}
	require.Equal(t, n, m.Len())
	spilled := 0
	for i := range m.shards {
		spilled += len(m.shards[i].more)
	}
	require.Positive(t, spilled)
	for i := range n {
		m.Unlock(key(i))
	}
	require.Equal(t, 0, m.Len())
	for i := range m.shards {
		s := &m.shards[i]
		require.Zero(t, s.used)
		require.Equal(t, [shardSlots]slot[string]{}, s.slots)
		require.Nil(t, s.more, "shard %d keeps its spill map", i)
	}
}

// TestShardKeepsSmallMapForReuse checks the other side of the trade: a
// shard that spilled only a little keeps its map, so a steady workload does
// not allocate a new one each time the shard empties.
func TestShardKeepsSmallMapForReuse(t *testing.T) {
	var s shard[int]
	for k := range shardSlots + 1 {
		s.insert(k)
	}
	require.Len(t, s.more, 1)
	for k := range shardSlots + 1 {
		require.True(t, s.release(k))
	}
	require.Equal(t, 0, s.len())
	require.NotNil(t, s.more)
	require.False(t, s.release(0), "a free key cannot be released")
}
