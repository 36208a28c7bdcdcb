package redisrate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisrate"
)

// TestPrefixesShareNothing: the bucket of Prefix P and Name
// "eu:rate:notion" and that of Prefix "P:rate:eu" and Name "notion" are
// two, though "{Prefix:rate:Name}" written plainly names both
// "{P:rate:eu:rate:notion}"; and so are a Keyed's.
func TestPrefixesShareNothing(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	a := newLimiter(t, c, redisrate.BucketConfig{Rate: 0.1, Prefix: p, Name: "eu:rate:notion"})
	b := newLimiter(t, c, redisrate.BucketConfig{Rate: 0.1, Prefix: p + ":rate:eu", Name: "notion"})
	require.Equal(t, 1, allowN(t, a, 2))
	require.Equal(t, 1, allowN(t, b, 1), "the second bucket was the first's")

	ka := newKeyed(t, c, redisrate.KeyedConfig{Rate: 0.1, Prefix: p, Name: "eu:rate:accounts"})
	kb := newKeyed(t, c, redisrate.KeyedConfig{Rate: 0.1, Prefix: p + ":rate:eu", Name: "accounts"})
	require.Equal(t, 1, keyAllowN(t, ka, "acct", 2))
	require.Equal(t, 1, keyAllowN(t, kb, "acct", 1), "the second Keyed's bucket was the first's")
}
