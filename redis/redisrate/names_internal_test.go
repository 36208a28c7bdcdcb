package redisrate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// The keys of a Bucket and of a Keyed's key, of any Prefix, Name and key
// (with ":", "%", the package's words, empty or long, a key with braces
// too), are never those of another bucket, and those of one Name share
// one hash tag.
func TestNamesNeverCollide(t *testing.T) {
	names := redistest.NewNameSet(t)
	redistest.ForNames(t, 100, func(prefix, name, key string) {
		t.Helper()
		if name == "" {
			return // refused
		}
		s, err := newShape("BucketConfig", 1, 1, name, prefix, false)
		require.NoError(t, err)
		if prefix == "" {
			prefix = DefaultPrefix
		}
		tat, pause := s.limiterKeys()
		names.Add(tat, "limiter", prefix, name, "tat")
		names.Add(pause, "limiter", prefix, name, "pause")
		ktat, kpause := s.keyedKeys(key)
		names.Add(ktat, "keyed", prefix, name, key, "tat")
		names.Add(kpause, "keyed", prefix, name, key, "pause")
		for _, n := range []string{tat, pause, ktat, kpause} {
			require.Equal(t, redistest.HashTag(s.tag), redistest.HashTag(n))
		}
	})
}
