package redisrate

import (
	"context"
	"embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/internal/redisfn"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// lib is the Redis function library of the package (see package
// redis/internal/redisfn), "pacer_rate_" and a hash of its code: take.lua,
// takes.lua, try.lua, tries.lua, pause.lua and release.lua, each a function called with FCALL
// in one round trip, after bucket.lua, the local functions they share.
// Their headers, in lua/, list their KEYS, ARGV and replies.
var lib = redisfn.New("pacer_rate_", function("bucket").Body,
	function("take"), function("takes"), function("try"), function("tries"), function("pause"), function("release"))

// The full names of the functions, which FCALL takes.
var (
	takeFn    = lib.Function("take")
	takesFn   = lib.Function("takes")
	tryFn     = lib.Function("try")
	triesFn   = lib.Function("tries")
	pauseFn   = lib.Function("pause")
	releaseFn = lib.Function("release")
)

// check makes sure that c's server can run lib, and loads it there: see
// redisfn.Library.Check.
func check(ctx context.Context, c redis.UniversalClient) error {
	if err := lib.Check(ctx, c); err != nil {
		return fmt.Errorf("redisrate: %w", err)
	}
	return nil
}

func function(name string) redisfn.Function {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return redisfn.Function{Name: name, Body: string(b)}
}

// command returns the FCALL command that runs fn on tat and pause with
// args, with every argument already boxed, so that running it allocates
// nothing beyond what the client does.
func command(fn, tat, pause string, args ...any) []any {
	return append([]any{"fcall", fn, 2, tat, pause}, args...)
}

// The longest delays take.lua accepts for Allow and for a Wait without a
// deadline, boxed once.
var (
	mostNow any = int64(0)
	mostAny any = int64(-1)
)

// remote is one bucket in Redis: its two keys and the commands that call
// the functions on them. It implements server.
type remote struct {
	c          redis.UniversalClient
	s          *shape
	tat, pause string
	// take.lua for Allow and for a Wait without a deadline, when built
	// ahead (by a Bucket or a KeyLimiter), else nil.
	allow, wait []any
}

// newRemote returns the bucket whose keys are tat and pause; ahead builds
// the commands of Allow and Wait once, for a value that is used many times.
func newRemote(c redis.UniversalClient, s *shape, tat, pause string, ahead bool) *remote {
	r := &remote{c: c, s: s, tat: tat, pause: pause}
	if ahead {
		r.allow = r.takeCommand(mostNow)
		r.wait = r.takeCommand(mostAny)
	}
	return r
}

func (r *remote) takeCommand(most any) []any {
	return command(takeFn, r.tat, r.pause, r.s.intervalArg, r.s.spanArg, most)
}

// take runs take.lua; see server.
func (r *remote) take(ctx context.Context, most int64) (delay, tat int64, err error) {
	var cmd []any
	switch {
	case most == 0 && r.allow != nil:
		cmd = r.allow
	case most == -1 && r.wait != nil:
		cmd = r.wait
	case most == 0:
		cmd = r.takeCommand(mostNow)
	case most == -1:
		cmd = r.takeCommand(mostAny)
	default:
		cmd = r.takeCommand(most)
	}
	v, err := lib.Do(ctx, r.c, cmd...).Result()
	if err != nil {
		return 0, 0, err
	}
	switch v := v.(type) {
	case int64:
		return v, 0, nil
	case []any:
		if len(v) == 2 {
			delay, ok1 := v[0].(int64)
			tat, ok2 := v[1].(int64)
			if ok1 && ok2 && delay > 0 {
				return delay, tat, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("take.lua replied %v", v)
}

// takes runs takes.lua for one event per element of most, in that
// order, and returns each one's delay and tat as take does.
func (r *remote) takes(ctx context.Context, most []int64) ([]turn, error) {
	cmd := make([]any, 0, 7+len(most))
	cmd = append(cmd, "fcall", takesFn, 2, r.tat, r.pause, r.s.intervalArg, r.s.spanArg)
	for _, m := range most {
		cmd = append(cmd, m)
	}
	v, err := lib.Do(ctx, r.c, cmd...).Int64Slice()
	if err != nil {
		return nil, err
	}
	if len(v) != 2*len(most) {
		return nil, fmt.Errorf("takes.lua replied %d integers for %d events", len(v), len(most))
	}
	turns := make([]turn, len(most))
	for i := range turns {
		turns[i] = turn{delay: v[2*i], tat: v[2*i+1]}
	}
	return turns, nil
}

// A turn is what take or takes gave one event: its delay in microseconds,
// -1 if nothing was taken, and the tat that release needs.
type turn struct{ delay, tat int64 }

// try runs try.lua: it takes an event if take is set and one conforms
// now, and returns 0 then, or else the delay until one does, in
// microseconds, with nothing taken.
func (r *remote) try(ctx context.Context, take bool) (int64, error) {
	flag := "0"
	if take {
		flag = "1"
	}
	return lib.Do(ctx, r.c, command(tryFn, r.tat, r.pause, r.s.intervalArg, r.s.spanArg, flag)...).Int64()
}

// release runs release.lua; see server.
func (r *remote) release(ctx context.Context, tat int64) error {
	_, err := lib.Do(ctx, r.c, command(releaseFn, r.tat, r.pause, tat, r.s.intervalArg)...).Result()
	return err
}

// pause runs pause.lua; see server.
func (r *remote) pauseFor(ctx context.Context, us int64) error {
	_, err := lib.Do(ctx, r.c, command(pauseFn, r.tat, r.pause, us, r.s.spanArg)...).Result()
	return err
}
