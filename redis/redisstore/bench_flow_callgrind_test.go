package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
)

// TestMeasureFlowInstructions counts the instructions the server runs a
// value in the end-to-end run of TestMeasureFlowThroughput, strict order
// with and without 100 tenants, under callgrind, which a shared machine's
// load does not move as it moves time: a redis-server of the test's own
// under valgrind (on PATH), its counts zeroed once the Adds are folded and
// dumped when the handler saw the last value, in PACER_BENCH_ROUNDS (2)
// alternating rounds. The server runs some 50 times slower, so a call
// ends more leases at once than at full speed; the counts compare
// versions, and strict against tenants, not the two speeds. The total
// moves a little with the load, as the server's timer work (serverCron)
// runs by the wall clock; the count in FCALL alone (fcallTotal) does not. With
// PACER_BENCH_CGDIR the dumps (cg.out.1, .2, ...: strict and tenants in
// turn) stay in that directory.
func TestMeasureFlowInstructions(t *testing.T) {
	benchOnly(t)
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed")
	}
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	dir := t.TempDir()
	if d := os.Getenv("PACER_BENCH_CGDIR"); d != "" {
		dir = d // kept, for callgrind_annotate
	}
	addr := redistest.ClosedAddr(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	srv := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, "cg.out"),
		"redis-server", "--bind", "127.0.0.1", "--port", port, "--dir", dir, "--save", "", "--appendonly", "no")
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	pid := strconv.Itoa(srv.Process.Pid)
	c := benchClient(t, addr)
	require.Eventually(t, func() bool { return c.Ping(context.Background()).Err() == nil }, time.Minute, 100*time.Millisecond)
	const keys, per = 500, 10
	dumps := 0
	n := 0
	run := func(tenants bool) (total, fcall float64) {
		n++
		s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: fmt.Sprint("cg", n)})
		require.NoError(t, err)
		defer s.Close()
		cfg := pacer.Config[string, int]{Store: s, Name: "q", MaxBatch: 1, Workers: 8}
		if tenants {
			cfg.Tenant = func(k string) string { return "t" + k[len(k)-2:] }
		}
		r, done := flowRunner(t, cfg, keys, per)
		ctx := context.Background()
		out, err := exec.Command("callgrind_control", "-z", pid).CombinedOutput()
		require.NoError(t, err, string(out))
		go func() { _ = r.Run(ctx) }()
		<-done
		out, err = exec.Command("callgrind_control", "-d", pid).CombinedOutput()
		require.NoError(t, err, string(out))
		dumps++
		require.NoError(t, r.Shutdown(ctx))
		path := filepath.Join(dir, fmt.Sprint("cg.out.", dumps))
		return dumpTotal(t, path) / (keys * per), fcallTotal(t, path) / (keys * per)
	}
	var off, on, foff, fon []float64
	for round := range rounds {
		a, fa := run(false)
		b, fb := run(true)
		off, on, foff, fon = append(off, a), append(on, b), append(foff, fa), append(fon, fb)
		fmt.Printf("flow instructions round %d: strict %.0f a value, tenants %.0f (%.3fx); in FCALL %.0f and %.0f (%.3fx)\n", round, a, b, b/a, fa, fb, fb/fa)
	}
	for _, s := range [][]float64{off, on, foff, fon} {
		slices.Sort(s)
	}
	m := len(off) / 2
	fmt.Printf("flow instructions median: strict %.0f a value, tenants %.0f (%.3fx); in FCALL %.0f and %.0f (%.3fx)\n", off[m], on[m], on[m]/off[m], foff[m], fon[m], fon[m]/foff[m])
}

// fcallTotal returns the instructions that FCALL ran in a callgrind dump
// (callgrind_annotate's inclusive count of fcallCommand), which leaves
// out the server's timer work (serverCron), whose count grows with the
// wall time a round takes, and so with the machine's load; 0 without
// callgrind_annotate.
func fcallTotal(t *testing.T, path string) float64 {
	out, err := exec.Command("callgrind_annotate", "--inclusive=yes", "--threshold=100", path).Output()
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(out)) {
		if f := strings.Fields(l); len(f) >= 2 && strings.Contains(l, ":fcallCommand ") {
			n, err := strconv.ParseFloat(strings.ReplaceAll(f[0], ",", ""), 64)
			require.NoError(t, err)
			return n
		}
	}
	return 0
}

// dumpTotal returns the instructions of a callgrind dump, once it is
// written whole.
func dumpTotal(t *testing.T, path string) float64 {
	var total float64
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		for l := range strings.Lines(string(b)) {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "totals:" {
				total, err = strconv.ParseFloat(f[1], 64)
				return err == nil
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond)
	return total
}
