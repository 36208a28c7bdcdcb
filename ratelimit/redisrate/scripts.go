package redisrate

import (
	"context"
	"embed"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts, each run with EVALSHA in one round trip. Their headers, in
// lua/, list their KEYS, ARGV and replies.
var (
	takeScript    = newScript("take.lua")
	pauseScript   = newScript("pause.lua")
	releaseScript = newScript("release.lua")
)

// script is a Lua script and its SHA1 digest.
type script struct{ src, sha string }

func newScript(name string) script {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(err) // embedded above: cannot happen
	}
	return script{src: string(b), sha: redis.NewScript(string(b)).Hash()}
}

// command returns the EVALSHA command that runs s on tat and pause with
// args, with every argument already boxed, so that running it allocates
// nothing beyond what the client does.
func (s script) command(tat, pause string, args ...any) []any {
	return append([]any{"evalsha", s.sha, 2, tat, pause}, args...)
}

// The longest delays take.lua accepts for Allow and for a Wait without a
// deadline, boxed once.
var (
	mostNow any = int64(0)
	mostAny any = int64(-1)
)

// remote is one bucket in Redis: its two keys and the commands that run
// the scripts on them. It implements server.
type remote struct {
	c          redis.UniversalClient
	s          *shape
	tat, pause string
	// take.lua for Allow and for a Wait without a deadline, when built
	// ahead (by a Limiter or a KeyLimiter), else nil.
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
	return takeScript.command(r.tat, r.pause, r.s.intervalArg, r.s.spanArg, most)
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
	v, err := r.run(ctx, takeScript, cmd)
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

// release runs release.lua; see server.
func (r *remote) release(ctx context.Context, tat int64) error {
	_, err := r.run(ctx, releaseScript, releaseScript.command(r.tat, r.pause, tat, r.s.intervalArg))
	return err
}

// pause runs pause.lua; see server.
func (r *remote) pauseFor(ctx context.Context, us int64) error {
	_, err := r.run(ctx, pauseScript, pauseScript.command(r.tat, r.pause, us, r.s.spanArg))
	return err
}

// run sends cmd, an EVALSHA of s, and returns the reply. A server that does
// not know s yet (first use, a restart, SCRIPT FLUSH) answers NOSCRIPT;
// then s is sent whole with EVAL, which also teaches it to the server.
func (r *remote) run(ctx context.Context, s script, cmd []any) (any, error) {
	c := redis.NewCmd(ctx, cmd...)
	c.SetFirstKeyPos(3)
	_ = r.c.Process(ctx, c)
	if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
		eval := slices.Clone(cmd)
		eval[0], eval[1] = "eval", s.src
		c = redis.NewCmd(ctx, eval...)
		c.SetFirstKeyPos(3)
		_ = r.c.Process(ctx, c)
	}
	return c.Result()
}
