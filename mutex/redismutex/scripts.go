package redismutex

import (
	"embed"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts, one per operation, each run with EVALSHA (falling back to
// EVAL once per server) in one round trip.
var (
	acquireScript = newScript("acquire.lua")
	renewScript   = newScript("renew.lua")
	releaseScript = newScript("release.lua")
)

func newScript(name string) *redis.Script {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return redis.NewScript(string(b))
}
