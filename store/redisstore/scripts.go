package redisstore

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts, one per operation, each run with EVALSHA (falling back to
// EVAL once per server) in one round trip. add.lua stands alone: the
// shortest script is the cheapest.
var (
	addScript         = redis.NewScript(mustRead("add.lua"))
	claimScript       = newScript("claim.lua")
	extendScript      = newScript("extend.lua")
	finishScript      = newScript("finish.lua")
	releaseScript     = newScript("release.lua")
	statsScript       = newScript("stats.lua")
	deadLettersScript = newScript("deadletters.lua")
	redriveScript     = newScript("redrive.lua")
	purgeScript       = newScript("purge.lua")
)

// includeLib is the line of a script that lib.lua replaces.
const includeLib = "-- @include lib.lua\n"

// newScript returns the script of the file name, with lib.lua in it.
func newScript(name string) *redis.Script {
	src := mustRead(name)
	if !strings.Contains(src, includeLib) {
		panic("redisstore: " + name + " does not include lib.lua")
	}
	return redis.NewScript(strings.Replace(src, includeLib, mustRead("lib.lua"), 1))
}

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return string(b)
}
