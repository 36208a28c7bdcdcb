package redismutex_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redismutex"
)

// TestPrefixesShareNothing: the locks of Prefix P and Name
// "eu:lock:accounts" and those of Prefix "P:lock:eu" and Name "accounts"
// are apart, though "{Prefix:lock:Name}" written plainly names both
// "{P:lock:eu:lock:accounts}".
func TestPrefixesShareNothing(t *testing.T) {
	p := prefix(t)
	a := newLocker(t, redismutex.Config{Prefix: p, Name: "eu:lock:accounts"})
	b := newLocker(t, redismutex.Config{Prefix: p + ":lock:eu", Name: "accounts"})
	ctx := t.Context()
	la, err := a.TryLock(ctx, "acct-42")
	require.NoError(t, err)
	lb, err := b.TryLock(ctx, "acct-42")
	require.NoError(t, err, "the second Locker's lock was the first's")
	require.NoError(t, la.Unlock(ctx))
	require.NoError(t, lb.Unlock(ctx))
}
