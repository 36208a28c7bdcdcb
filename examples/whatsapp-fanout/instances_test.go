package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// redisForTest returns a client of the test Redis and a key prefix of the
// test's own, whose keys are deleted at the end; without a Redis it ends t
// as enginetest.Missing does.
func redisForTest(t *testing.T) (*redis.Client, string) {
	t.Helper()
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(t, err, "PACER_REDIS_URL")
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		enginetest.Missing(t, fmt.Sprintf("no Redis at %s (%v): start redis-server, or set PACER_REDIS_URL", opt.Addr, err))
	}
	prefix := fmt.Sprintf("wa-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := client.Keys(ctx, `\{`+prefix+`:*`).Result()
		if len(keys) > 0 {
			client.Del(ctx, keys...)
		}
	})
	return client, prefix
}

// instanceReminder is a reminder of account to groups named after id, so
// that the groups of several reminders of one account are told apart.
func instanceReminder(id, account string, groups int) reminder {
	r := testReminder(id, account, groups)
	r.Zone, r.Window = "UTC", "00:00-24:00"
	for i := range r.Groups {
		r.Groups[i] = fmt.Sprintf("%s-g%03d", id, i)
	}
	return r
}

func writeReminders(t *testing.T, rs ...reminder) string {
	t.Helper()
	b, err := json.Marshal(rs)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "reminders.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// TestTwoInstances runs two instances of the program as OS processes on one
// Redis, both given reminder "both" of account x, each one more reminder
// of x of its own, and both a reminder of account y. The account lock and
// the progress in Redis make every reminder run once: the instance that
// takes x's lock for "both" second finds it done. The reminders of x run
// one after the other, and the two instances together keep x's rate.
func TestTwoInstances(t *testing.T) {
	client, prefix := redisForTest(t)
	program(t)
	gw := newGateway()
	gw.latency = time.Millisecond
	srv := httptest.NewServer(gw)
	defer srv.Close()

	const groups, rate, burst, parallel = 20, 1800, 2, 3 // x: 120 messages at 30/s
	both, onlyA, onlyB, y := instanceReminder("both", "x", groups), instanceReminder("only-a", "x", groups),
		instanceReminder("only-b", "x", groups), instanceReminder("y", "y", groups)
	common := []string{"-url", srv.URL, "-redis", enginetest.RedisURL(), "-redis-prefix", prefix,
		"-rate", fmt.Sprint(rate), "-burst", fmt.Sprint(burst), "-parallel", fmt.Sprint(parallel),
		"-jitter-min", "1ms", "-jitter-max", "3ms", "-attempts", "3", "-backoff", "10ms"}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	a := startProgram(t, ctx, append([]string{"-reminders", writeReminders(t, both, onlyA, y)}, common...)...)
	b := startProgram(t, ctx, append([]string{"-reminders", writeReminders(t, both, onlyB, y)}, common...)...)
	require.NoError(t, a.wait(), "instance a:\n%s", a.out.String())
	require.NoError(t, b.wait(), "instance b:\n%s", b.out.String())
	t.Logf("instance a:\n%s\ninstance b:\n%s", a.out.String(), b.out.String())

	seen := gw.seen()
	all := []reminder{both, onlyA, onlyB, y}
	for _, r := range all {
		for _, g := range r.Groups {
			require.Equal(t, []int{0, 1}, seen.Delivered[r.Account+"/"+g], "%s/%s: each part once, in order", r.Account, g)
		}
	}
	require.Equal(t, 3*groups*2, len(seen.Requests["x"]), "nothing of x was sent twice, not even a duplicate the gateway suppressed")
	require.Equal(t, groups*2, len(seen.Requests["y"]))

	// "both" ran in one instance; the other found it done.
	lines := []string{lineOf(a.out.String(), " both "), lineOf(b.out.String(), " both ")}
	done := 0
	for _, l := range lines {
		require.Contains(t, l, "success", l)
		if strings.Contains(l, "nothing to do") {
			done++
		}
	}
	require.Equal(t, 1, done, "one instance ran it, the other found it done: %q", lines)

	// The progress in Redis says so too.
	for _, r := range all {
		s, err := client.HGet(t.Context(), "{"+prefix+":whatsapp-fanout}:reminder:"+r.ID, "state").Result()
		require.NoError(t, err)
		rs, err := decodeProgress(r.ID, s, nil)
		require.NoError(t, err)
		require.Equal(t, statusSuccess, rs.Status, r.ID)
	}

	// x's reminders ran one at a time, across both instances.
	type span struct{ from, to time.Time }
	var spans []span
	for _, r := range all[:3] {
		var ts []time.Time
		for _, g := range r.Groups {
			ts = append(ts, seen.At["x/"+g]...)
		}
		spans = append(spans, span{slices.MinFunc(ts, time.Time.Compare), slices.MaxFunc(ts, time.Time.Compare)})
	}
	slices.SortFunc(spans, func(p, q span) int { return p.from.Compare(q.from) })
	for i := 1; i < len(spans); i++ {
		require.True(t, spans[i].from.After(spans[i-1].to), "x's fan-outs overlap: %v", spans)
	}

	// Together under x's rate: at most burst + n sends in any n token
	// intervals, plus the sends in flight whose token came just before.
	const n = 30 // one second
	interval := time.Minute / rate
	att := make([]attempt, len(seen.Requests["x"]))
	for i, at := range seen.Requests["x"] {
		att[i] = attempt{Account: "x", At: at}
	}
	peak := peakIn(att, "x", n*interval)
	t.Logf("x: peak %d sends in %v (rate %d/min, burst %d)", peak, n*interval, rate, burst)
	require.LessOrEqual(t, peak, burst+n+1+parallel)
}

// TestInstanceKilled kills an instance with SIGKILL while it holds an
// account's lock, just after the gateway accepted a part of it; two
// instances started then wait for the dead one's lock to lapse, and one of
// them resumes the reminder from its progress in Redis. The parts the dead
// instance had sent but not stored go out again with their idempotency
// keys: the gateway suppresses them, and each part is delivered once.
func TestInstanceKilled(t *testing.T) {
	_, prefix := redisForTest(t)
	program(t)
	var mu sync.Mutex
	var first *process
	gw := newGateway()
	gw.latency = time.Millisecond
	gw.onDeliver = func(n int) {
		if n == 50 {
			mu.Lock()
			p := first
			mu.Unlock()
			require.NoError(t, p.kill())
		}
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()

	r := instanceReminder("r", "x", 60)
	args := []string{"-reminders", writeReminders(t, r), "-url", srv.URL, "-redis", enginetest.RedisURL(),
		"-redis-prefix", prefix, "-lock-ttl", "1s", "-rate", "6000", "-burst", "3", "-parallel", "3",
		"-jitter-min", "1ms", "-jitter-max", "3ms", "-attempts", "3", "-backoff", "10ms"}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	mu.Lock()
	first = startProgram(t, ctx, args...)
	mu.Unlock()
	require.True(t, first.killed(), "killed at the 50th part:\n%s", first.out.String())
	gw.setGen(1)
	b := startProgram(t, ctx, args...)
	c := startProgram(t, ctx, args...)
	require.NoError(t, b.wait(), b.out.String())
	require.NoError(t, c.wait(), c.out.String())
	t.Logf("after the kill:\n%s\n%s", b.out.String(), c.out.String())

	seen := gw.seen()
	for _, g := range r.Groups {
		require.Equal(t, []int{0, 1}, seen.Delivered["x/"+g], "%s: each part once, in order", g)
	}
	require.Positive(t, seen.Suppressed[1]["x"], "the part accepted at the kill went out again and was suppressed")
	outs := []string{lineOf(b.out.String(), " r "), lineOf(c.out.String(), " r ")}
	ran := 0
	for _, l := range outs {
		require.Contains(t, l, "success", l)
		if !strings.Contains(l, "nothing to do") {
			ran++
			require.True(t, hasNote(l, fmt.Sprintf("duplicates suppressed by the gateway: %d", seen.Suppressed[1]["x"])), l)
		}
	}
	require.Equal(t, 1, ran, "one instance resumed it: %q", outs)
}
