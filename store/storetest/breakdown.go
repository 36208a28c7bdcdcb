package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// IsCodec reports whether fn encodes or decodes keys or values: the
// Runner's codecs, and the adapter's steps that call them.
func IsCodec(fn string) bool {
	if rest, ok := strings.CutPrefix(fn, "github.com/pacerkit/pacer."); ok {
		for _, c := range []string{"JSON[", "stringKey[", "intKey[", "uintKey["} {
			if strings.HasPrefix(rest, c) {
				return true
			}
		}
	}
	if strings.HasPrefix(fn, "github.com/pacerkit/pacer/internal/shared.") {
		_, m, ok := strings.Cut(fn, "]).")
		return ok && (strings.HasPrefix(m, "decode") || strings.HasPrefix(m, "encode") || strings.HasPrefix(m, "Decode"))
	}
	return false
}

// PrintCPUShares prints the process's CPU time of a profiled run of
// values values per value, and its split by shares (FirstFrame).
func PrintCPUShares(t testing.TB, p Profiled, values int, shares []Share) {
	t.Helper()
	by, total := ProfileShares(t, p.CPUProfile, "", "cpu", FirstFrame(shares))
	perValue := float64(p.CPU.Nanoseconds()) / 1e3 / float64(values)
	fmt.Printf("  this process: CPU (getrusage) %.1f µs; by part (profile, %v sampled):\n", perValue, total)
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return int(by[b] - by[a]) })
	for _, name := range names {
		share := float64(by[name]) / float64(total)
		fmt.Printf("    %-40s %4.1f%%  %5.1f µs/value\n", name, 100*share, share*perValue)
	}
}

// PrintWaits prints, per value, where the workers of a profiled run of
// took waited (WorkerWaits), next to their time in all.
func PrintWaits(t testing.TB, p Profiled, values, workers int, took time.Duration, sharedFinish func(string) bool) {
	t.Helper()
	by, _ := ProfileShares(t, p.BlockProfile, p.BlockBase, "delay", WorkerWaits(sharedFinish))
	perValue := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(values) }
	fmt.Printf("  waits (block profile): the %d workers' time, %.1f µs per value\n", workers, perValue(time.Duration(workers)*took))
	for _, name := range []string{WaitFinish, WaitShared, WaitGet, WaitWorker, WaitBackground} {
		fmt.Printf("    %-56s %7.1f µs/value\n", name, perValue(by[name]))
	}
}
