package redisfn_test

import (
	"context"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// Check of a server that answers, by a user allowed everything, loads
// the library.
func TestCheck(t *testing.T) {
	c := client(t)
	l := newLibrary(t, c)
	require.NoError(t, l.Check(t.Context(), c))
	libs, err := c.FunctionList(t.Context(), redis.FunctionListQuery{LibraryNamePattern: l.Name()}).Result()
	require.NoError(t, err)
	require.Len(t, libs, 1, "Check loads the library")
	require.NoError(t, l.Check(t.Context(), c), "a library already there")
}

// A wrong address fails at its first dial, well before a deadline that
// go-redis' default retries (5 dials, 3 retries: about 1.7 s) would
// reach, with the address and what is missing.
func TestCheckUnreachable(t *testing.T) {
	c := redistest.Unreachable(t)
	l := newLibrary(t, client(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	err := l.Check(ctx, c)
	require.NoError(t, ctx.Err(), "Check ran to ctx's deadline: %v", err)
	require.ErrorContains(t, err, c.Options().Addr+": not reachable: dial tcp "+c.Options().Addr+": connect: connection refused")
}

// A server that takes the connection but never replies (a listener that
// accepts nothing: the kernel completes the handshake) fails at ctx's
// deadline, well before the client's ReadTimeout and its retries.
func TestCheckSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	c := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
	t.Cleanup(func() { _ = c.Close() })
	l := newLibrary(t, client(t))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err = l.Check(ctx, c)
	require.EqualError(t, err, ln.Addr().String()+": not reachable: no reply to PING: context deadline exceeded")
}

// A server older than 7.0 is refused with its version. (The tests' Redis
// is 7.0 or later: a hook of the client's makes HELLO report 6.2.14.)
func TestCheckOldServer(t *testing.T) {
	c := client(t)
	c.AddHook(helloVersion("6.2.14"))
	l := newLibrary(t, c)
	err := l.Check(t.Context(), c)
	require.EqualError(t, err, c.Options().Addr+": Redis 6.2.14: 7.0 or later is needed, for functions")
}

// A user not allowed FUNCTION LOAD, or FCALL, is refused with what it
// lacks; one not allowed the @dangerous commands (INFO among them) is not
// refused for that.
func TestCheckPermissions(t *testing.T) {
	srv := redistest.StartServer(t)
	admin := redistest.Dial(t, &redis.Options{Addr: srv.Addr()})
	l := newLibrary(t, admin)
	user := func(name string, rules ...string) *redis.Client {
		t.Helper()
		pw := rand.Text()
		args := []any{"acl", "setuser", name, "on", ">" + pw, "~*", "&*", "+@all"}
		for _, r := range rules {
			args = append(args, r)
		}
		require.NoError(t, admin.Do(t.Context(), args...).Err())
		return redistest.Dial(t, &redis.Options{Addr: srv.Addr(), Username: name, Password: pw})
	}

	err := l.Check(t.Context(), user("noload", "-function|load"))
	require.ErrorContains(t, err, srv.Addr()+": cannot load the function library (FUNCTION LOAD): NOPERM")
	err = l.Check(t.Context(), user("nofcall", "-fcall"))
	require.ErrorContains(t, err, srv.Addr()+": cannot call the library's functions (FCALL): NOPERM")
	require.NoError(t, l.Check(t.Context(), user("safe", "-@dangerous")))
}

// helloVersion is a client hook that makes HELLO's reply give version.
type helloVersion string

func (helloVersion) DialHook(next redis.DialHook) redis.DialHook { return next }

func (v helloVersion) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.Cmd); ok && err == nil && cmd.Name() == "hello" {
			c.SetVal(map[any]any{"server": "redis", "version": string(v)})
		}
		return err
	}
}

func (helloVersion) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
