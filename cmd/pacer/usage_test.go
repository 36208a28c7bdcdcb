package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// TestHelp asks each command for -h, and pacer for its list: exit 0, the
// usage line, an example and the flags on stdout.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"help"}, {"-help"}} {
		out := ok(t, args...)
		for _, c := range commands() {
			assert.Contains(t, out, "\n  "+c.name+" ", "pacer %v lists %s", args, c.name)
		}
		assert.Contains(t, out, "Exit status: 0")
	}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "-h"}, {"help", c.name}, {"-redis", "redis://nowhere:1/0", c.name, "a", "-h"}} {
			out := ok(t, args...)
			require.True(t, strings.HasPrefix(out, "usage: pacer "+c.name+" [store flags]"), "pacer %q:\n%s", args, out)
			assert.Contains(t, out, "\nexample:\n  pacer "+c.name+" ")
			assert.Contains(t, out, "\nflags:\n")
			assert.Contains(t, out, "  -redis string")
			assert.Contains(t, out, "  -json\n")
		}
	}
	assert.Contains(t, ok(t, "purge", "-h"), "  -before string")
	assert.Contains(t, ok(t, "keys", "-h"), "  -state value")
}

// TestUsageErrors gives pacer command lines it cannot run: each exits 2,
// says why on stderr, and writes nothing on stdout.
func TestUsageErrors(t *testing.T) {
	redis := []string{"-redis", enginetest.RedisURL()}
	with := func(args ...string) []string { return append(append([]string{}, redis...), args...) }
	for _, c := range []struct {
		args []string
		says string
	}{
		{nil, "name a command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"-nope", "queues"}, "flag provided but not defined: -nope"},
		{with("queues", "-nope"), "flag provided but not defined: -nope"},
		{[]string{"queues"}, "name the store: -redis URL or -postgres URL"},
		{[]string{"queues", "-redis", "redis://a:1/0", "-postgres", "postgres://b/c"}, "-redis and -postgres name two stores"},
		{with("keys"), "keys needs QUEUE"},
		{with("queues", "extra"), `queues takes no arguments, not ["extra"]`},
		{with("values", "q"), "values needs QUEUE KEY"},
		{with("pause", "q", "k", "more"), `pause takes QUEUE [KEY], not ["more"]`},
		{with("keys", "q", "-state", "sleeping"), `"sleeping" is not a key state`},
		{with("keys", "q", "-limit", "many"), `invalid value "many" for flag -limit`},
		{with("redrive", "q", "seven"), `ID "seven" is not a dead letter's ID`},
		{with("purge", "q"), "purge needs -before"},
		{with("purge", "q", "-before", "yesterday"), `-before "yesterday" is neither an age`},
		{with("purge", "q", "-before", "-1h"), "an age must not be negative"},
		{[]string{"queues", "-redis", "http://a/"}, "-redis: "},
		{[]string{"queues", "-postgres", "::"}, "-postgres: "},
	} {
		o := runBin(t, c.args...)
		assert.Equal(t, 2, o.code, "pacer %q: %+v", c.args, o)
		assert.Contains(t, o.stderr, c.says, "pacer %q", c.args)
		assert.True(t, strings.HasPrefix(o.stderr, "pacer: "), "pacer %q: %s", c.args, o.stderr)
		assert.Empty(t, o.stdout, "pacer %q", c.args)
	}
}

// TestFailures gives pacer command lines it can run but that fail: each
// exits 1.
func TestFailures(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		// Nothing listens on port 1.
		{[]string{"queues", "-redis", "redis://127.0.0.1:1/0"}, "127.0.0.1:1"},
		{[]string{"queues", "-postgres", enginetest.PostgresURL(), "-schema", "no_such_schema_" + token()}, "no schema"},
		{[]string{"queues", "-postgres", enginetest.PostgresURL(), "-schema", "bad schema"}, `no schema "bad schema"`},
		{[]string{"queues", "-redis", enginetest.RedisURL(), "-redis-prefix", "a{b}"}, "Config.Prefix"},
	} {
		o := runBin(t, c.args...)
		assert.Equal(t, 1, o.code, "pacer %q: %+v", c.args, o)
		assert.Contains(t, o.stderr, c.says, "pacer %q", c.args)
		assert.Empty(t, o.stdout, "pacer %q", c.args)
	}
}
