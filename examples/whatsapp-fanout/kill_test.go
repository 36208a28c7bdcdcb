package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKill9 runs the program as an OS process against a gateway on HTTP
// and kills it with SIGKILL just after the gateway accepted a message,
// before the program could record it; each time it is started again on
// its state file, six times in all. The parts accepted but not recorded
// go out again with their idempotency keys, which the gateway honours: in
// the end every group has received each of its parts exactly once, in
// order, and the report of the last run counts the duplicates that the
// gateway suppressed during it.
func TestKill9(t *testing.T) {
	program(t) // built outside the budget of the runs below
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	const groups = 100
	rs := []reminder{testReminder("r-a", "acct-a", groups), testReminder("r-b", "acct-b", groups)}
	for i := range rs {
		rs[i].Zone, rs[i].Window = "UTC", "00:00-24:00"
	}
	b, err := json.Marshal(rs)
	require.NoError(t, err)
	remindersFile := filepath.Join(dir, "reminders.json")
	require.NoError(t, os.WriteFile(remindersFile, b, 0o600))

	// The gateway kills the running process after these deliveries.
	kills := map[int]bool{30: true, 90: true, 150: true, 210: true, 270: true, 330: true}
	var mu sync.Mutex
	var running *process
	gw := newGateway()
	gw.latency = 2 * time.Millisecond
	gw.onDeliver = func(n int) {
		if !kills[n] {
			return
		}
		mu.Lock()
		p := running
		mu.Unlock()
		require.NoError(t, p.kill()) // no answer reaches it
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	args := []string{"-reminders", remindersFile, "-state", state, "-url", srv.URL,
		"-rate", "30000", "-burst", "5", "-parallel", "3", "-jitter-min", "1ms", "-jitter-max", "3ms",
		"-attempts", "3", "-backoff", "10ms"}
	var p *process
	killed := 0
	for gen := 0; ; gen++ {
		require.Less(t, gen, 20, "the program keeps dying")
		gw.setGen(gen)
		mu.Lock() // the gateway kills only a started process
		p = startProgram(t, ctx, args...)
		running = p
		mu.Unlock()
		if p.killed() {
			killed++
			continue
		}
		require.NoError(t, p.wait(), "the last run ends well:\n%s", p.out.String())
		t.Logf("run %d, after %d kills:\n%s", gen, killed, p.out.String())
		break
	}
	require.Equal(t, len(kills), killed)

	seen := gw.seen()
	twice := 0
	for _, r := range rs {
		for _, g := range r.Groups {
			twice += max(0, len(seen.Delivered[r.Account+"/"+g])-len(r.Parts))
		}
	}
	require.Zero(t, twice, "parts delivered twice")
	for _, r := range rs {
		for _, g := range r.Groups {
			require.Equal(t, []int{0, 1}, seen.Delivered[r.Account+"/"+g], "%s/%s: each part once, in order", r.Account, g)
		}
	}
	require.Zero(t, seen.NoKey, "every message carries an idempotency key")
	suppressed := 0
	for _, byAccount := range seen.Suppressed {
		for _, n := range byAccount {
			suppressed += n
		}
	}
	// Each kill left at least the message it followed accepted but not
	// recorded.
	require.GreaterOrEqual(t, suppressed, killed, "duplicates suppressed")
	t.Logf("%d kills, %d duplicates suppressed by the gateway", killed, suppressed)

	last := seen.Suppressed[killed]
	for _, r := range rs {
		line := lineOf(p.out.String(), r.Account)
		require.Contains(t, line, "success", line)
		if n := last[r.Account]; n > 0 {
			require.True(t, hasNote(line, fmt.Sprintf("duplicates suppressed by the gateway: %d", n)), line)
		} else {
			require.NotContains(t, line, "duplicates suppressed", line)
		}
	}
	require.Positive(t, len(last), "the last kill's duplicates are suppressed in the last run")
	leftovers, err := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	require.NoError(t, err)
	require.Empty(t, leftovers)
}

// hasNote reports whether a report line has note among its notes, which
// are separated by "; ".
func hasNote(line, note string) bool {
	return strings.Contains(strings.TrimSpace(line)+";", note+";")
}

// lineOf returns the first line of s that mentions account.
func lineOf(s, account string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, account) {
			return line
		}
	}
	return ""
}
