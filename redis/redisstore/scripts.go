package redisstore

import (
	"context"
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
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
	addFn         = lib.Function("add")
	claimFn       = lib.Function("claim")
	extendFn      = lib.Function("extend")
	finishFn      = lib.Function("finish")
	releaseFn     = lib.Function("release")
	statsFn       = lib.Function("stats")
	deadLettersFn = lib.Function("deadletters")
	redriveFn     = lib.Function("redrive")
	purgeFn       = lib.Function("purge")
	keysFn        = lib.Function("keys")
	keyFn         = lib.Function("key")
	valuesFn      = lib.Function("values")
	reindexFn     = lib.Function("reindex")
	pauseQueueFn  = lib.Function("pausequeue")
	pauseKeyFn    = lib.Function("pausekey")
	resumeKeyFn   = lib.Function("resumekey")
	retryNowFn    = lib.Function("retrynow")
	dropKeyFn     = lib.Function("dropkey")
)

// lib is the library of the package's functions.
var lib = newLibrary("add", "claim", "extend", "finish", "release", "stats", "deadletters", "redrive", "purge",
	"keys", "key", "values", "reindex", "pausequeue", "pausekey", "resumekey", "retrynow", "dropkey")

// includeLib is the line of a script that uses lib.lua.
const includeLib = "-- @include lib.lua\n"

// newLibrary returns the library of lib.lua, lib_perkey.lua and
// lib_inspect.lua, which
// hold the steps the scripts share, then one function per script, whose body is the
// script's code. A script's "-- @include lib.lua" line becomes a call of
// lib.lua's begin. Its name is "pacer_" and a hash of its code.
func newLibrary(scripts ...string) *redisfn.Library {
	fns := make([]redisfn.Function, 0, len(scripts))
	for _, name := range scripts {
		src := mustRead(name + ".lua")
		if name != "add" {
			// add.lua stands alone: the shortest script is the cheapest.
			if !strings.Contains(src, includeLib) {
				panic("redisstore: " + name + ".lua does not include lib.lua")
			}
			src = strings.Replace(src, includeLib, "begin(ARGV[1])\n", 1)
		}
		fns = append(fns, redisfn.Function{Name: name, Body: src})
	}
	return redisfn.New("pacer_", mustRead("lib.lua")+mustRead("lib_perkey.lua")+mustRead("lib_inspect.lua"), fns...)
}

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
	return lib.Call(ctx, s.c, fn, keys, args...)
}
