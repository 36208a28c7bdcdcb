package redisstore

import (
	"embed"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts, one per operation, each run with EVALSHA (falling back to
// EVAL once per server) in one round trip. lib.lua comes first in each.
var (
	addScript         = newScript("add.lua")
	claimScript       = newScript("claim.lua")
	extendScript      = newScript("extend.lua")
	finishScript      = newScript("finish.lua")
	releaseScript     = newScript("release.lua")
	statsScript       = newScript("stats.lua")
	deadLettersScript = newScript("deadletters.lua")
	redriveScript     = newScript("redrive.lua")
	purgeScript       = newScript("purge.lua")
)

func newScript(name string) *redis.Script {
	return redis.NewScript(mustRead("lib.lua") + "\n" + mustRead(name))
}

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return string(b)
}
