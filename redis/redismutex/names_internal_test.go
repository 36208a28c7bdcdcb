package redismutex

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// The names of a Locker's locks, fence counter and channel, of any Prefix,
// Name and key (with ":", "%", the package's words, empty or long, a key
// with braces too), are never those of another Locker or lock, and those
// of one Name share one hash tag.
func TestNamesNeverCollide(t *testing.T) {
	names := redistest.NewNameSet(t)
	redistest.ForNames(t, 100, func(prefix, name, key string) {
		t.Helper()
		n := newNames(prefix, name)
		names.Add(n.fence, prefix, name, "fence")
		names.Add(n.released, prefix, name, "released")
		names.Add(n.lockKey(key), prefix, name, "lock", key)
		for _, s := range []string{n.fence, n.released, n.lockKey(key)} {
			require.Equal(t, redistest.HashTag(n.prefix), redistest.HashTag(s))
		}
	})
}
