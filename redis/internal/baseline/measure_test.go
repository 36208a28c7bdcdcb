package baseline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// serverCPU returns the CPU time the server spent so far (INFO cpu:
// used_cpu_sys and used_cpu_user).
func serverCPU(t testing.TB, c *redis.Client) time.Duration {
	info, err := c.Info(context.Background(), "cpu").Result()
	require.NoError(t, err)
	var total float64
	for _, line := range strings.Split(info, "\n") {
		for _, f := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), f); ok {
				s, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err)
				total += s
			}
		}
	}
	return time.Duration(total * float64(time.Second))
}

// commandStats is INFO commandstats: calls and µs by command, the
// commands that functions and scripts run included.
type commandStats map[string][2]float64

func readCommandStats(t testing.TB, c *redis.Client) commandStats {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	cs := commandStats{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, rest, _ := strings.Cut(rest, ",usec=")
		usec, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseFloat(calls, 64)
		require.NoError(t, err)
		u, err := strconv.ParseFloat(usec, 64)
		require.NoError(t, err)
		cs[strings.TrimPrefix(name, "cmdstat_")] = [2]float64{n, u}
	}
	return cs
}

func (cs commandStats) minus(base commandStats) commandStats {
	d := commandStats{}
	for name, v := range cs {
		if b := base[name]; v[0] != b[0] {
			d[name] = [2]float64{v[0] - b[0], v[1] - b[1]}
		}
	}
	return d
}

// calls returns the commands run, those that functions run included.
func (cs commandStats) calls() (n float64) {
	for _, v := range cs {
		n += v[0]
	}
	return n
}

// ownUsec returns the commands' own µs: a function's or script's µs
// include those of the commands it runs, so they are left out.
func (cs commandStats) ownUsec() (n float64) {
	for name, v := range cs {
		if !isScript(name) {
			n += v[1]
		}
	}
	return n
}

// scripts returns the function and script calls.
func (cs commandStats) scripts() (n float64) {
	for name, v := range cs {
		if isScript(name) {
			n += v[0]
		}
	}
	return n
}

func isScript(name string) bool { return name == "fcall" || name == "evalsha" || name == "eval" }

// perValue lists the commands by calls a value, the most first.
func (cs commandStats) perValue(n int) string {
	names := make([]string, 0, len(cs))
	for name := range cs {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return int(cs[b][0] - cs[a][0]) })
	var sb strings.Builder
	for _, name := range names {
		if name == "info" {
			continue
		}
		fmt.Fprintf(&sb, " %s %.2f", name, cs[name][0]/float64(n))
	}
	return sb.String()
}

// roundTrips counts what a client sends: each command it processes
// alone, and each pipeline, is a round trip.
type roundTrips struct {
	mu sync.Mutex
	n  int
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.add()
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.add()
		return next(ctx, cmds)
	}
}

func (h *roundTrips) add() {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

// take returns the round trips counted since the last take.
func (h *roundTrips) take() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.n
	h.n = 0
	return n
}

// figures gathers a measure's figures over rounds, by name.
type figures struct {
	names []string
	by    map[string][]float64
}

func (f *figures) add(name string, v float64) {
	if f.by == nil {
		f.by = map[string][]float64{}
	}
	if _, ok := f.by[name]; !ok {
		f.names = append(f.names, name)
	}
	f.by[name] = append(f.by[name], v)
}

// print prints each name's median and range.
func (f *figures) print() {
	for _, name := range f.names {
		vs := slices.Clone(f.by[name])
		slices.Sort(vs)
		med := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		format := "%.3f"
		switch {
		case med >= 100:
			format = "%.0f"
		case med >= 10:
			format = "%.1f"
		}
		fmt.Printf("  %-58s "+format+" ("+format+"-"+format+")\n", name, med, vs[0], vs[len(vs)-1])
	}
}
