package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// ServerCPU returns the CPU time the server spent so far (INFO cpu:
// used_cpu_sys and used_cpu_user).
func ServerCPU(tb testing.TB, c *redis.Client) time.Duration {
	info, err := c.Info(context.Background(), "cpu").Result()
	require.NoError(tb, err)
	var total float64
	for _, line := range strings.Split(info, "\n") {
		for _, f := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), f); ok {
				s, err := strconv.ParseFloat(v, 64)
				require.NoError(tb, err)
				total += s
			}
		}
	}
	return time.Duration(total * float64(time.Second))
}

// CommandStats is INFO commandstats: each command's calls and the µs the
// server spent in it, the commands that functions and scripts run
// included.
type CommandStats map[string][2]float64

// ReadCommandStats reads the server's CommandStats.
func ReadCommandStats(tb testing.TB, c *redis.Client) CommandStats {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(tb, err)
	cs := CommandStats{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, rest, _ := strings.Cut(rest, ",usec=")
		usec, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseFloat(calls, 64)
		require.NoError(tb, err)
		u, err := strconv.ParseFloat(usec, 64)
		require.NoError(tb, err)
		cs[strings.TrimPrefix(name, "cmdstat_")] = [2]float64{n, u}
	}
	return cs
}

// Minus returns what cs holds beyond base, for the commands called since.
func (cs CommandStats) Minus(base CommandStats) CommandStats {
	d := CommandStats{}
	for name, v := range cs {
		if b := base[name]; v[0] != b[0] {
			d[name] = [2]float64{v[0] - b[0], v[1] - b[1]}
		}
	}
	return d
}

// Calls returns the commands run, those that functions run included.
func (cs CommandStats) Calls() (n float64) {
	for _, v := range cs {
		n += v[0]
	}
	return n
}

// OwnUsec returns the commands' own µs: a function's or script's µs
// include those of the commands it runs, so they are left out.
func (cs CommandStats) OwnUsec() (n float64) {
	for name, v := range cs {
		if !isScript(name) {
			n += v[1]
		}
	}
	return n
}

// Scripts returns the function and script calls.
func (cs CommandStats) Scripts() (n float64) {
	for name, v := range cs {
		if isScript(name) {
			n += v[0]
		}
	}
	return n
}

func isScript(name string) bool { return name == "fcall" || name == "evalsha" || name == "eval" }
