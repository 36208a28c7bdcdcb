package redisfn_test

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// client returns a client of the tests' Redis; see redistest.Client.
var client = redistest.Client

// newLibrary returns a library of the test's own (its head holds a random
// comment, so its hash is new), deleted from the server when t ends.
func newLibrary(t *testing.T, c *redis.Client) *redisfn.Library {
	t.Helper()
	l := redisfn.New("pacertest_", "-- "+rand.Text()+"\nlocal answer = '42'\n",
		redisfn.Function{Name: "echo", Body: "return {KEYS[1], ARGV[1], answer}"},
		redisfn.Function{Name: "incr", Body: "return redis.call('INCR', KEYS[1])"})
	t.Cleanup(func() { _ = c.FunctionDelete(context.Background(), l.Name()).Err() })
	return l
}

// The name is the prefix and a hash of the code, the same for the same
// code, and a function's name is the library's and its own.
func TestNames(t *testing.T) {
	a := redisfn.New("p_", "local x = 1\n", redisfn.Function{Name: "f", Body: "return x"})
	b := redisfn.New("p_", "local x = 1\n", redisfn.Function{Name: "f", Body: "return x"})
	c := redisfn.New("p_", "local x = 2\n", redisfn.Function{Name: "f", Body: "return x"})
	require.Equal(t, a.Name(), b.Name())
	require.NotEqual(t, a.Name(), c.Name())
	require.Regexp(t, `^p_[0-9a-f]{16}$`, a.Name())
	require.Equal(t, a.Name()+"_f", a.Function("f"))
	require.True(t, strings.HasPrefix(a.Code(), "#!lua name="+a.Name()+"\n"), a.Code())
	require.Contains(t, a.Code(), "redis.register_function('"+a.Function("f")+"', function(KEYS, ARGV)\nreturn x\nend)")
}

// Call and Do load the library into a server that lacks it, on the first
// call and again after FUNCTION DELETE, and the call then goes through.
func TestLoadsWhereMissing(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	l := newLibrary(t, c)
	key := "{pacertest:redisfn}:" + rand.Text()
	t.Cleanup(func() { c.Del(context.Background(), key) })

	v, err := l.Call(ctx, c, l.Function("echo"), []string{key}, "x").StringSlice()
	require.NoError(t, err)
	require.Equal(t, []string{key, "x", "42"}, v)
	require.NoError(t, c.FunctionDelete(ctx, l.Name()).Err())
	n, err := l.Do(ctx, c, "fcall", l.Function("incr"), 1, key).Int()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, c.FunctionDelete(ctx, l.Name()).Err())
	n, err = l.Call(ctx, c, l.Function("incr"), []string{key}).Int()
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

// Calls that find the library missing at once each load it: the loads
// that find it there already are no error, and every call runs once.
func TestConcurrentLoads(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	l := newLibrary(t, c)
	key := "{pacertest:redisfn}:" + rand.Text()
	t.Cleanup(func() { c.Del(context.Background(), key) })
	const calls = 8
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if err := l.Do(ctx, c, "fcall", l.Function("incr"), 1, key).Err(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	require.Equal(t, strconv.Itoa(calls), c.Get(ctx, key).Val())
}

// A call whose library cannot be loaded returns the load's error.
func TestLoadError(t *testing.T) {
	c := client(t)
	ctx := t.Context()
	bad := redisfn.New("pacertest_", "-- "+rand.Text()+"\n", redisfn.Function{Name: "f", Body: "return ("})
	err := bad.Call(ctx, c, bad.Function("f"), nil).Err()
	require.ErrorContains(t, err, "loading the function library: ")
	err = bad.Do(ctx, c, "fcall", bad.Function("f"), 0).Err()
	require.ErrorContains(t, err, "loading the function library: ")
}
