package redisname_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// decode gives back the parts of the name that key starts with, or an
// error if key is not one KeyPrefix could start: the inverse of the
// encoding, whose existence proves it injective.
func decode(key string) ([]string, error) {
	end := strings.IndexByte(key, '}')
	if !strings.HasPrefix(key, "{") || end < 0 || !strings.HasPrefix(key[end+1:], ":") {
		return nil, errors.New("no {...}: at the start")
	}
	var parts []string
	for _, p := range strings.Split(key[1:end], ":") {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			if p[i] != '%' {
				b.WriteByte(p[i])
				continue
			}
			switch {
			case strings.HasPrefix(p[i:], "%25"):
				b.WriteByte('%')
			case strings.HasPrefix(p[i:], "%3A"):
				b.WriteByte(':')
			default:
				return nil, errors.New("a % that escapes nothing")
			}
			i += 2
		}
		parts = append(parts, b.String())
	}
	return parts, nil
}

func randomParts(r *rand.Rand) []string {
	parts := make([]string, 2+r.IntN(2))
	for i := range parts {
		parts[i] = redistest.RandomPart(r, false)
	}
	return parts
}

// Every key that starts with a name gives that name back, whatever
// follows (braces and colons too), so two different names, of any
// number of parts, never start the same key; and Cluster hashes the
// name's braces, never empty.
func TestDecodes(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for range 2000 {
		parts := randomParts(r)
		p := redisname.KeyPrefix(parts...)
		key := p + redistest.RandomPart(r, true) + "}{:" + redistest.RandomPart(r, true)
		got, err := decode(key)
		require.NoError(t, err, "%q", parts)
		require.Equal(t, parts, got)
		got, rest, ok := redisname.Parts(key)
		require.True(t, ok, "%q", key)
		require.Equal(t, parts, got)
		require.Equal(t, key[len(p):], rest)
		require.Equal(t, p[1:len(p)-2], redistest.HashTag(key))
		require.NotEmpty(t, redistest.HashTag(key))
	}
}

// Different names start different keys: random names, of two and three
// parts, and the pairs that a plain join, such as "{prefix:name}", names
// alike (a Prefix "P" with the queue "eu:orders", a Prefix "P:eu" with
// "orders").
func TestDistinct(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	seen := redistest.NewNameSet(t)
	add := func(parts ...string) {
		t.Helper()
		seen.Add(redisname.KeyPrefix(parts...), parts...)
	}
	for range 100 {
		for _, p := range redistest.RandomPairs(r) {
			add(p[0], p[1])
			add(p[0], "rate", p[1])
		}
	}
	for range 2000 {
		add(randomParts(r)...)
		if p := redistest.RandomPart(r, false); p != "" {
			add(p)
		}
	}
	add("P", "eu:orders")
	add("P:eu", "orders")
	require.NotEqual(t, redisname.KeyPrefix("P", "eu:orders"), redisname.KeyPrefix("P:eu", "orders"))
}

// A part without "%" or ":" is written as it is; the others are escaped.
func TestReadable(t *testing.T) {
	require.Equal(t, "{pacer:orders}:", redisname.KeyPrefix("pacer", "orders"))
	require.Equal(t, "{pacer:rate:notion}:", redisname.KeyPrefix("pacer", "rate", "notion"))
	require.Equal(t, "{P:eu%3Aorders}:", redisname.KeyPrefix("P", "eu:orders"))
	require.Equal(t, "{P%3Aeu:orders}:", redisname.KeyPrefix("P:eu", "orders"))
	require.Equal(t, "{100%25:%253A}:", redisname.KeyPrefix("100%", "%3A"))
	require.Equal(t, "{:}:", redisname.KeyPrefix("", ""))
	long := strings.Repeat(":", 1<<20)
	require.Equal(t, "{"+strings.Repeat("%3A", 1<<20)+":x}:", redisname.KeyPrefix(long, "x"))
}

// A brace, no part, or one empty part (an empty hash tag) is a caller's
// bug.
func TestPanics(t *testing.T) {
	require.Panics(t, func() { redisname.KeyPrefix("a{", "b") })
	require.Panics(t, func() { redisname.KeyPrefix("a", "}") })
	require.Panics(t, func() { redisname.KeyPrefix("}") })
	require.Panics(t, func() { redisname.KeyPrefix("") })
	require.Panics(t, func() { redisname.KeyPrefix() })
}

// A name of one part is written and read back as the others are.
func TestOnePart(t *testing.T) {
	require.Equal(t, "{pacer}:", redisname.KeyPrefix("pacer"))
	require.Equal(t, "{P%3Aeu}:", redisname.KeyPrefix("P:eu"))
	parts, rest, ok := redisname.Parts("{P%3Aeu}:queues")
	require.True(t, ok)
	require.Equal(t, []string{"P:eu"}, parts)
	require.Equal(t, "queues", rest)
}

// Parts refuses what KeyPrefix does not write.
func TestPartsRefuses(t *testing.T) {
	for _, key := range []string{"", "pacer:q", "{pacer:q", "{pacer:q}", "{pacer:q}x", "{a%2:b}:", "{a%:b}:", "x{a:b}:"} {
		_, _, ok := redisname.Parts(key)
		require.False(t, ok, "%q", key)
	}
}
