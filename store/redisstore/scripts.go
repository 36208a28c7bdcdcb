package redisstore

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The operations, one script of lua/ each, which the Store runs as the
// functions of one Redis function library (FCALL), each in one round
// trip. A function costs less to call than a script run with EVALSHA,
// which on Redis 7.0 sets up the script's KEYS and ARGV as globals on
// every call, and the steps the scripts share (lib.lua) are defined once,
// when the library is loaded, not on every call.
var (
	addFn         = lib.function("add")
	claimFn       = lib.function("claim")
	extendFn      = lib.function("extend")
	finishFn      = lib.function("finish")
	releaseFn     = lib.function("release")
	statsFn       = lib.function("stats")
	deadLettersFn = lib.function("deadletters")
	redriveFn     = lib.function("redrive")
	purgeFn       = lib.function("purge")
)

// lib is the library of the package's functions.
var lib = newLibrary("add", "claim", "extend", "finish", "release", "stats", "deadletters", "redrive", "purge")

// A library is the code of a Redis function library: lib.lua, which
// holds the steps the scripts share, then one function per script, whose
// body is the script's code, a function of KEYS and ARGV. A script's
// "-- @include lib.lua" line becomes a call of lib.lua's begin.
//
// Its name and its functions' names end with a hash of the code, so that
// processes that run different versions of the package each call their
// own, as scripts' SHA1 digests do with EVALSHA.
type library struct {
	name string
	code string
}

// includeLib is the line of a script that uses lib.lua.
const includeLib = "-- @include lib.lua\n"

func newLibrary(scripts ...string) *library {
	var body strings.Builder
	body.WriteString(mustRead("lib.lua"))
	for _, name := range scripts {
		src := mustRead(name + ".lua")
		if name != "add" {
			// add.lua stands alone: the shortest script is the cheapest.
			if !strings.Contains(src, includeLib) {
				panic("redisstore: " + name + ".lua does not include lib.lua")
			}
			src = strings.Replace(src, includeLib, "begin(ARGV[1])\n", 1)
		}
		body.WriteString("redis.register_function('@_" + name + "', function(KEYS, ARGV)\n")
		body.WriteString(src)
		body.WriteString("\nend)\n")
	}
	sum := sha1.Sum([]byte(body.String()))
	l := &library{name: "pacer_" + hex.EncodeToString(sum[:8])}
	l.code = "#!lua name=" + l.name + "\n" + strings.ReplaceAll(body.String(), "'@_", "'"+l.name+"_")
	return l
}

// function returns the name of the library's function of the script name.
func (l *library) function(name string) string { return l.name + "_" + name }

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return string(b)
}

// call runs the library's function fn with keys and args, in one round
// trip. A server that does not have the library yet (a new server, one
// restarted without persistence, a new node of a cluster) gets it first.
func (s *Store) call(ctx context.Context, fn string, keys []string, args ...any) *redis.Cmd {
	cmd := s.c.FCall(ctx, fn, keys, args...)
	if err := cmd.Err(); err != nil && strings.Contains(err.Error(), "Function not found") {
		if err := s.load(ctx); err != nil {
			cmd.SetErr(fmt.Errorf("loading the function library: %w", err))
			return cmd
		}
		cmd = s.c.FCall(ctx, fn, keys, args...)
	}
	return cmd
}

// load loads the library into the server, or into every master of a
// cluster.
func (s *Store) load(ctx context.Context) error {
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, lib.code).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	}
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return load(ctx, m) })
	}
	return load(ctx, s.c)
}
