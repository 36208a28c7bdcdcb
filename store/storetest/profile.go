package storetest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Profiled is what ProfileRun recorded of a run: the process's CPU time
// (getrusage) and its CPU and block profiles, as files for ProfileShares.
type Profiled struct {
	CPU        time.Duration
	CPUProfile string
	// BlockProfile and BlockBase are the block profile after and before
	// the run: the block profile counts from the process's start, so the
	// run's is their difference.
	BlockProfile, BlockBase string
}

// ProfileRun runs f under a CPU profile of the process and a block
// profile that records every blocking event (which slows the blocking
// paths: the run's wall time is not a measurement), and returns what
// they recorded. The profiles' files are named after name, in the
// directory PACER_BENCH_PROFILES names if set (for go tool pprof), or in
// a temporary one.
func ProfileRun(t testing.TB, name string, f func()) Profiled {
	t.Helper()
	dir := os.Getenv("PACER_BENCH_PROFILES")
	if dir == "" {
		dir = t.TempDir()
	}
	p := Profiled{
		CPUProfile:   filepath.Join(dir, name+"-cpu.pb.gz"),
		BlockProfile: filepath.Join(dir, name+"-block.pb.gz"),
		BlockBase:    filepath.Join(dir, name+"-block-base.pb.gz"),
	}
	writeProfile(t, "block", p.BlockBase)
	cpu, err := os.Create(p.CPUProfile)
	require.NoError(t, err)
	defer cpu.Close()
	runtime.SetBlockProfileRate(1)
	require.NoError(t, pprof.StartCPUProfile(cpu))
	before := ProcessCPU(t)
	f()
	p.CPU = ProcessCPU(t) - before
	pprof.StopCPUProfile()
	runtime.SetBlockProfileRate(0)
	writeProfile(t, "block", p.BlockProfile)
	return p
}

func writeProfile(t testing.TB, name, path string) {
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, pprof.Lookup(name).WriteTo(f, 0))
}

// ProcessCPU returns the user and system CPU time the process used so far.
func ProcessCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A Share names a part of the code that FirstFrame puts samples on.
type Share struct {
	Name string
	// Has reports whether the function (its full name, as pprof prints
	// it) belongs to the part.
	Has func(fn string) bool
}

// Prefixed is a Share's Has for the functions whose names start with one
// of prefixes.
func Prefixed(prefixes ...string) func(string) bool {
	return func(fn string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(fn, p) {
				return true
			}
		}
		return false
	}
}

// Unshared is the part of a sample that no Share has a frame of: for CPU
// time, the runtime's own (GC workers, the scheduler).
const Unshared = "other"

// FirstFrame returns a part function for ProfileShares that puts a sample
// on the part of its first frame, from the leaf, that a share has, so that
// what a part calls in the standard library (a syscall, an allocation)
// counts as its own; the shares are tried in order on each frame.
func FirstFrame(shares []Share) func(stack []string) string {
	return func(stack []string) string {
		for _, fn := range stack {
			for _, s := range shares {
				if s.Has(fn) {
					return s.Name
				}
			}
		}
		return Unshared
	}
}

// ProfileShares reads a profile (minus base, if not empty) with go tool
// pprof and sums its samples of sampleIndex ("cpu", "delay") by the part
// that part names for each sample's stack (its functions, from the leaf).
func ProfileShares(t testing.TB, profile, base, sampleIndex string, part func(stack []string) string) (by map[string]time.Duration, total time.Duration) {
	t.Helper()
	args := []string{"tool", "pprof", "-traces", "-sample_index=" + sampleIndex}
	if base != "" {
		args = append(args, "-base", base)
	}
	out, err := exec.Command("go", append(args, profile)...).Output()
	require.NoError(t, err, "go tool pprof")
	by = map[string]time.Duration{}
	var value time.Duration
	var stack []string
	flush := func() {
		if value > 0 {
			by[part(stack)] += value
			total += value
		}
		value, stack = 0, stack[:0]
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	width := 0
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "-+-"); i > 0 && strings.Trim(line[:i+1], "-") == "" {
			flush()
			width = i + 1
			continue
		}
		// A sample's lines are its frames, from the leaf, in the column
		// after the separator's "+"; its value is left of the leaf's.
		if width == 0 || len(line) <= width || strings.TrimSpace(line) == "" {
			continue
		}
		if v := strings.TrimSpace(line[:width]); v != "" {
			value = pprofDuration(t, v)
		}
		stack = append(stack, strings.TrimSpace(line[width:]))
	}
	flush()
	return by, total
}

// The parts of a block profile that WorkerWaits names.
const (
	WaitFinish     = "worker in Finish: its store call"
	WaitShared     = "  of which a store call waits for the shared call ahead"
	WaitGet        = "worker in Get: waiting for a hand-off or the lead"
	WaitWorker     = "worker elsewhere"
	WaitBackground = "other goroutines"
)

// WorkerWaits returns a part function for ProfileShares over a block
// profile of a Runner with a Store: where its workers wait (in Finish,
// for the call that ends their lease, which runs on a goroutine of its
// own, or in Get, for a lease that another worker claimed or for the
// leader's place), and, apart, how long store calls wait in sharedFinish
// (the first frame of pacer's from the leaf) for the shared call ahead of
// them to land.
func WorkerWaits(sharedFinish func(fn string) bool) func(stack []string) string {
	return func(stack []string) string {
		for _, fn := range stack {
			if strings.HasPrefix(fn, "github.com/pacerkit/pacer") {
				if sharedFinish(fn) {
					return WaitShared
				}
				break
			}
		}
		worker := false
		for _, fn := range stack {
			worker = worker || strings.HasPrefix(fn, "github.com/pacerkit/pacer.(*Runner[") && strings.HasSuffix(fn, "]).work")
		}
		if !worker {
			return WaitBackground
		}
		for _, fn := range stack {
			if strings.HasPrefix(fn, "github.com/pacerkit/pacer/internal/shared.(*Engine[") {
				switch {
				case strings.HasSuffix(fn, "]).Get"):
					return WaitGet
				case strings.HasSuffix(fn, "]).Finish"):
					return WaitFinish
				}
			}
		}
		return WaitWorker
	}
}

// pprofDuration parses a value as pprof prints times: a Go duration
// below a minute, then with the units mins, hrs and days.
func pprofDuration(t testing.TB, v string) time.Duration {
	for unit, d := range map[string]time.Duration{"mins": time.Minute, "hrs": time.Hour, "days": 24 * time.Hour} {
		if n, ok := strings.CutSuffix(v, unit); ok {
			f, err := strconv.ParseFloat(n, 64)
			require.NoError(t, err, "a sample's value %q", v)
			return time.Duration(f * float64(d))
		}
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "a sample's value %q", v)
	return d
}
