// Package redisfn runs the Lua code of pacer's Redis packages as a Redis
// function library (Redis 7.0 or later), called with FCALL and loaded into
// a server that lacks it.
//
// A function costs less to call than a script run with EVALSHA, which on
// Redis 7.0 sets up the script's KEYS and ARGV as globals on every call;
// and the code that a library's functions share is run once, when the
// library loads, not on every call.
//
// A library's name, and so its functions', ends with a hash of its code,
// so that processes that run different versions of a package each call
// their own, as scripts' SHA1 digests do with EVALSHA. The library is
// loaded where a call reports it missing: on the first call to a new
// server, after a restart without persistence or FUNCTION FLUSH, and on a
// new node of a cluster. An old version's library stays in the server
// until FUNCTION DELETE removes it. The Redis user must be allowed
// FUNCTION LOAD and FCALL; Check, which the packages' constructors call,
// makes sure of it, and of the server's version, before the first call.
package redisfn

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A Function is one function of a library: its short name, and its body,
// Lua code that sees the call's keys and arguments as KEYS and ARGV.
type Function struct {
	Name string
	Body string
}

// A Library is the code of a Redis function library and its name. It is
// safe for concurrent use.
type Library struct {
	name string
	code string
}

// New returns the library of head, Lua code that runs once when the
// library loads (locals the functions share), then fns, and a function
// "probe" that Check calls (so no fn may be named "probe"). Its name is
// prefix followed by a hash of the code; a function's full name, which
// FCALL takes, is the library's name, "_" and the function's short name
// (see Function).
func New(prefix, head string, fns ...Function) *Library {
	var body strings.Builder
	body.WriteString(head)
	for _, fn := range fns {
		if fn.Name == probeFunction {
			panic("redisfn: a function is named " + probeFunction + ", as Check's own is")
		}
	}
	fns = append(fns[:len(fns):len(fns)], Function{Name: probeFunction, Body: "return 1"})
	for _, fn := range fns {
		// "@_" stands for the library's name, which the hash of this
		// text gives.
		body.WriteString("redis.register_function('@_" + fn.Name + "', function(KEYS, ARGV)\n")
		body.WriteString(fn.Body)
		body.WriteString("\nend)\n")
	}
	sum := sha1.Sum([]byte(body.String()))
	l := &Library{name: prefix + hex.EncodeToString(sum[:8])}
	l.code = "#!lua name=" + l.name + "\n" + strings.ReplaceAll(body.String(), "'@_", "'"+l.name+"_")
	return l
}

// Name returns the library's name.
func (l *Library) Name() string { return l.name }

// Code returns the library's code, as FUNCTION LOAD takes it.
func (l *Library) Code() string { return l.code }

// Function returns the full name of the library's function short, which
// FCALL takes.
func (l *Library) Function(short string) string { return l.name + "_" + short }

// Call runs FCALL fn with keys and args, in one round trip, and loads the
// library first if the server lacks it.
func (l *Library) Call(ctx context.Context, c redis.UniversalClient, fn string, keys []string, args ...any) *redis.Cmd {
	cmd := c.FCall(ctx, fn, keys, args...)
	if missing(cmd.Err()) {
		if err := l.Load(ctx, c); err != nil {
			cmd.SetErr(fmt.Errorf("loading the function library: %w", err))
			return cmd
		}
		cmd = c.FCall(ctx, fn, keys, args...)
	}
	return cmd
}

// Do is Call for a command built ahead: args is the whole FCALL command,
// "fcall", the function's full name, the number of keys, the keys, then
// the arguments. A caller that keeps args, its values boxed once, runs a
// function without allocating beyond what the client does.
func (l *Library) Do(ctx context.Context, c redis.UniversalClient, args ...any) *redis.Cmd {
	cmd := fcall(ctx, args)
	_ = c.Process(ctx, cmd)
	if missing(cmd.Err()) {
		if err := l.Load(ctx, c); err != nil {
			cmd.SetErr(fmt.Errorf("loading the function library: %w", err))
			return cmd
		}
		cmd = fcall(ctx, args)
		_ = c.Process(ctx, cmd)
	}
	return cmd
}

func fcall(ctx context.Context, args []any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	cmd.SetFirstKeyPos(3) // fcall fn numkeys key...
	return cmd
}

// missing reports whether err says that the server lacks the function.
func missing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Function not found")
}

// Load loads the library into the server, or into every master of a
// cluster. A library already there (another process loaded it first)
// is no error.
func (l *Library) Load(ctx context.Context, c redis.UniversalClient) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return l.load(ctx, m) })
	}
	return l.load(ctx, c)
}

// load loads the library into the server of c, which is no cluster.
func (l *Library) load(ctx context.Context, c redis.Cmdable) error {
	err := c.FunctionLoad(ctx, l.code).Err()
	if err != nil && strings.Contains(err.Error(), "already exists") {
		return nil
	}
	return err
}
