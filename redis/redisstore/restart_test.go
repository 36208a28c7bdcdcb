package redisstore_test

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// TestServerKilledAndRestarted runs a redis-server of its own, with every
// write synced to its append-only file, kills it with SIGKILL mid-run and
// starts it again: calls fail at once while it is down, and every value
// that Add accepted is there afterwards, in order, with the script cache
// gone (EVALSHA falls back to EVAL).
func TestServerKilledAndRestarted(t *testing.T) {
	bin := enginetest.RedisServer(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--logfile", "redis.log")
		require.NoError(t, cmd.Start())
		return cmd
	}
	stop := func(cmd *exec.Cmd) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	srv := start()
	t.Cleanup(func() { stop(srv) })

	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	ctx := t.Context()
	up := func() {
		t.Helper()
		require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 10*time.Second, 10*time.Millisecond, "redis-server did not start")
	}
	up()
	s, err := redisstore.New(ctx, c, redisstore.Config{})
	require.NoError(t, err)
	defer s.Close()

	var want []string
	for i := range 200 {
		v := fmt.Sprint(i)
		require.NoError(t, s.Add(ctx, "q", fmt.Sprint(i%7), [][]byte{[]byte(v)}, store.AddParams{}))
		want = append(want, v)
	}
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, MaxBatch: 3, TTL: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Len(t, ls, 2)

	stop(srv) // kill -9
	before := time.Now()
	require.Error(t, s.Add(ctx, "q", "0", [][]byte{[]byte("lost")}, store.AddParams{}))
	_, _, err = s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.Error(t, err)
	require.Less(t, time.Since(before), time.Second, "calls to a server that is down must fail at once")

	srv = start()
	up()
	got := map[string][]string{}
	for {
		ls, next, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 4, TTL: time.Minute})
		require.NoError(t, err)
		if len(ls) == 0 {
			if next == store.Never {
				break
			}
			require.NoError(t, s.Wait(ctx, "q", next)) // the leases of before the kill lapse
			continue
		}
		for _, l := range ls {
			for _, v := range l.Values {
				got[l.Key] = append(got[l.Key], string(v))
			}
			_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
		}
	}
	for k := range 7 {
		var w []string
		for i := k; i < len(want); i += 7 {
			w = append(w, want[i])
		}
		require.Equal(t, w, got[fmt.Sprint(k)], "values of key %d", k)
	}
}
