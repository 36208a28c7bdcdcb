package baseline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// commandsPerValue lists cs's commands by calls a value, the most first.
func commandsPerValue(cs redistest.CommandStats, n int) string {
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
