package redismutex

import (
	"context"
	"embed"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// lib is the Redis function library of the package (see package
// redis/internal/redisfn), "pacer_lock_" and a hash of its code: acquire.lua,
// renew.lua and release.lua, each a function called with FCALL in one
// round trip, one per operation.
var lib = redisfn.New("pacer_lock_", "", function("acquire"), function("renew"), function("release"))

// The functions, their full names boxed once.
var (
	acquireFn fn = fn{lib.Function("acquire")}
	renewFn   fn = fn{lib.Function("renew")}
	releaseFn fn = fn{lib.Function("release")}
)

func function(name string) redisfn.Function {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return redisfn.Function{Name: name, Body: string(b)}
}

// A fn is a function of the library. run builds its command in one slice
// of arguments, from the keys and arguments as they come, where go-redis'
// FCall takes the keys in a slice of their own.
type fn struct{ name any }

// run calls the function with args, which holds its keys KEYS, then ARGV,
// and loads the library first if the server lacks it.
func (f fn) run(ctx context.Context, c redis.UniversalClient, keys int, args ...any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(args))
	cmdArgs = append(cmdArgs, "fcall", f.name, keys)
	cmdArgs = append(cmdArgs, args...)
	return lib.Do(ctx, c, cmdArgs...)
}
