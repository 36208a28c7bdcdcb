package redisstore_test

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// printCommandStats prints, with PACER_BENCH_CMDS=1, each command's calls
// and server microseconds per value between before and after, most
// microseconds first.
func printCommandStats(before, after redistest.CommandStats, values int) {
	if os.Getenv("PACER_BENCH_CMDS") != "1" {
		return
	}
	type row struct {
		name        string
		calls, usec float64
	}
	var rows []row
	for name, d := range after.Minus(before) {
		rows = append(rows, row{name, d[0] / float64(values), d[1] / float64(values)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].usec > rows[j].usec })
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, " %s %.3f/%.2fus", r.name, r.calls, r.usec)
	}
	fmt.Printf("  commands per value (calls/usec):%s\n", b.String())
}
