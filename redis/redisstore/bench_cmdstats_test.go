package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// commandStat is one command's line of INFO commandstats: its calls and
// the microseconds the server spent in it.
type commandStat struct{ calls, usec int64 }

// commandStats returns INFO commandstats by command.
func commandStats(t *testing.T, c *redis.Client) map[string]commandStat {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	out := map[string]commandStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, found := strings.CutPrefix(name, "cmdstat_")
		if !ok || !found {
			continue
		}
		var st commandStat
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				st.calls = int64(n)
			case "usec":
				st.usec = int64(n)
			}
		}
		out[name] = st
	}
	return out
}

// printCommandStats prints, with PACER_BENCH_CMDS=1, each command's calls
// and server microseconds per value between before and after, most
// microseconds first.
func printCommandStats(before, after map[string]commandStat, values int) {
	if os.Getenv("PACER_BENCH_CMDS") != "1" {
		return
	}
	type row struct {
		name        string
		calls, usec float64
	}
	var rows []row
	for name, a := range after {
		b := before[name]
		if a.calls == b.calls {
			continue
		}
		rows = append(rows, row{name, float64(a.calls-b.calls) / float64(values), float64(a.usec-b.usec) / float64(values)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].usec > rows[j].usec })
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, " %s %.3f/%.2fus", r.name, r.calls, r.usec)
	}
	fmt.Printf("  commands per value (calls/usec):%s\n", b.String())
}
