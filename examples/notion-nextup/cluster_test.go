package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/examples/internal/proctest"
	"github.com/pacerkit/pacer/internal/enginetest"
)

// TestThreeInstances runs the program as three OS processes on one Redis
// behind one webhook stream, against one fake task API that allows 3
// requests per second for all of them together, as the multi-instance
// demo does (see runCluster): no 429 after warm-up across the instances;
// no user's requests ever come from two runs at once (the API checks each
// run's fence); a 429 with Retry-After that the API is told to answer
// holds every instance until its end; and the instance killed with
// SIGKILL in the middle of a run loses no event answered 202.
func TestThreeInstances(t *testing.T) {
	url := redisURL(t)
	prefix := fmt.Sprintf("nextup-test-%d-%s", os.Getpid(), rand.Text()[:8])
	ctx, cancel := context.WithTimeout(t.Context(), 55*time.Second)
	defer cancel()
	logs := new(proctest.Output)
	cfg := clusterConfig{
		Command: program, RedisURL: url, Prefix: prefix, Instances: 3, Logs: logs,
		App: appConfig{Secret: []byte("s3cret"), Rate: 3, Burst: 3, Workers: 1,
			Debounce: 300 * time.Millisecond, MaxWait: time.Second, LeaseTTL: 2 * time.Second},
	}
	rep, err := runCluster(ctx, cfg)
	require.NoError(t, err, "instances' logs:\n%s", logs)
	var out bytes.Buffer
	rep.print(&out)
	t.Log("\n" + out.String())
	for _, c := range rep.checks {
		require.True(t, c.ok, "check failed: %s\n%s\ninstances' logs:\n%s", c.name, out.String(), logs)
	}

	require.Greater(t, rep.accepted, 30)
	require.Empty(t, rep.missing, "every event answered 202 is in a recompute")
	for _, in := range rep.instances {
		require.Positive(t, in.events, "%s took events", in.name)
		require.Positive(t, in.calls, "%s called the API", in.name)
	}
	require.Zero(t, rep.api.Throttled, "not even a warm-up 429: the instances share one bucket")
	require.Equal(t, 1, rep.induced)
	require.Zero(t, rep.api.Stale)
	require.Zero(t, rep.api.Unfenced, "every request carries its run's fence")
	require.Zero(t, rep.held, "no call from %v after the 429 to its end", rep.grace)
	require.NotEmpty(t, rep.killed)
	require.NotEqual(t, rep.killed, rep.rerunBy)
	// The killed instance renewed its lease at most a third of it before
	// the kill: nobody could take its user over for two thirds of it.
	require.GreaterOrEqual(t, rep.rerunAfter, cfg.App.LeaseTTL/2)
	require.Len(t, rep.stopped, 2)
	for name, err := range rep.stopped {
		require.NoError(t, err, "%s stopped cleanly", name)
	}

	// The run left nothing in Redis.
	rdb, err := dialRedis(ctx, url)
	require.NoError(t, err)
	defer rdb.Close()
	keys, _, err := rdb.Scan(ctx, 0, "{"+prefix+":*", 1000).Result()
	require.NoError(t, err)
	require.Empty(t, keys)
}

// redisURL returns the test Redis's URL, or ends the test as Missing when
// it does not answer.
func redisURL(t *testing.T) string {
	t.Helper()
	url := enginetest.RedisURL()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	rdb, err := dialRedis(ctx, url)
	if err != nil {
		enginetest.Missing(t, fmt.Sprintf("no Redis for the instances (%v): start one or set PACER_REDIS_URL", err))
	}
	rdb.Close()
	return url
}

// TestFakeAPIFences checks the fake API's guard: a request whose fence is
// behind its user's newest is refused with 409 and counted, whatever the
// user's other requests; one without a fence passes and is counted.
func TestFakeAPIFences(t *testing.T) {
	f := newFakeAPI(100, 100, false, time.Now)
	f.put(Task{ID: "a1", Assignee: "alice"})
	f.put(Task{ID: "b1", Assignee: "bob"})
	call := func(method, path, body, fence string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if fence != "" {
			req.Header.Set(fenceHeader, fence)
		}
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, req)
		return rec.Code
	}
	query := func(user, fence string) int {
		return call(http.MethodPost, "/v1/tasks/query", `{"assignee":"`+user+`"}`, fence)
	}
	require.Equal(t, 200, query("alice", "5"))
	require.Equal(t, 200, call(http.MethodPatch, "/v1/tasks/a1", `{"rank":1}`, "5"), "the same run")
	require.Equal(t, 200, query("alice", "7"), "a newer run")
	require.Equal(t, 409, call(http.MethodPatch, "/v1/tasks/a1", `{"rank":2}`, "5"), "the older run writes after the newer began")
	require.Equal(t, 1, f.userTasks("alice")[0].Rank, "its write refused")
	require.Equal(t, 200, query("bob", "1"), "fences are per user")
	require.Equal(t, 200, query("alice", ""))
	s := f.snapshot()
	require.Equal(t, 1, s.Stale)
	require.Equal(t, 1, s.Unfenced)
}

// TestFakeAPIThrottleCall checks the induced 429: the nth request gets it,
// with the Retry-After asked for, whatever the budget, and without
// reaching the API, so without counting as a 429 of the limit.
func TestFakeAPIThrottleCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &clusterAPI{fakeAPI: newFakeAPI(100, 100, false, time.Now)}
		f.put(Task{ID: "a1", Assignee: "alice"})
		at := f.throttleCall(2, 3*time.Second)
		codes := make([]int, 3)
		var retryAfter string
		for i := range codes {
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/tasks/query", strings.NewReader(`{"assignee":"alice"}`)))
			codes[i] = rec.Code
			if rec.Code == 429 {
				retryAfter = rec.Header().Get("Retry-After")
			}
		}
		require.Equal(t, []int{200, 429, 200}, codes)
		require.Equal(t, "3", retryAfter)
		require.Equal(t, time.Now(), <-at)
		s := f.snapshot()
		require.Equal(t, 1, f.inducedCount())
		require.Zero(t, s.Throttled)
		require.Equal(t, 2, s.Calls)
		calls := f.callLog()
		require.Len(t, calls, 2, "every request but the induced 429 reached the API")
		require.Equal(t, "alice", calls[0].User)
		require.True(t, calls[0].Query)
		require.Equal(t, []int{200, 200}, []int{calls[0].Status, calls[1].Status})
	})
}

// TestParseRecomputes reads the IDs back from the lines the pipeline logs.
func TestParseRecomputes(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	log.Info("listening", "webhook", "http://127.0.0.1:1/webhook")
	log.Info("recomputed", "user", "alice", "events", 2, "since_first_event", time.Second, "tasks", 2, "written", 1, "ids", eventIDs([]Event{{ID: "ev001"}, {ID: "ev002"}}))
	log.Info("recomputed", "user", "bob", "events", 1, "ids", eventIDs([]Event{{}}))
	log.Info("recomputed", "user", "carol", "events", 1, "ids", `odd "id",ev003`)
	require.Equal(t, []recompute{
		{user: "alice", ids: []string{"ev001", "ev002"}},
		{user: "bob"},
		{user: "carol", ids: []string{`odd "id"`, "ev003"}},
	}, parseRecomputes(logs.String()))
}

// TestClusterChecksCanFail feeds the multi-instance checks what a broken
// run would show: each fails.
func TestClusterChecksCanFail(t *testing.T) {
	good := func() *clusterReport {
		return &clusterReport{
			cfg:       clusterConfig{App: appConfig{LeaseTTL: 2 * time.Second}},
			instances: []instanceReport{{name: "i1", events: 1}, {name: "i2", events: 1}},
			accepted:  2,
			api:       apiStats{Calls: 10},
			resumed:   100 * time.Millisecond,
			killed:    "i1", victim: "alice", rerunBy: "i2", rerunAfter: 1500 * time.Millisecond,
			stopped: map[string]error{"i2": nil},
		}
	}
	r := good()
	r.checks = r.runChecks()
	require.True(t, r.checks.ok(), "%v", r.checks)
	breaks := map[string]func(r *clusterReport){
		"an event lost":                func(r *clusterReport) { r.missing = []string{"ev001"} },
		"an instance without events":   func(r *clusterReport) { r.instances[1].events = 0 },
		"a request behind its fence":   func(r *clusterReport) { r.api.Stale = 1 },
		"a request without a fence":    func(r *clusterReport) { r.api.Unfenced = 1 },
		"a 429 after warm-up":          func(r *clusterReport) { r.api.ThrottledWarm = 1 },
		"a call during the pause":      func(r *clusterReport) { r.held = 1 },
		"no call after the pause":      func(r *clusterReport) { r.resumed = -1 },
		"the killed user never rerun":  func(r *clusterReport) { r.rerunBy, r.rerunAfter = "", -1 },
		"rerun before the lease ended": func(r *clusterReport) { r.rerunAfter = 100 * time.Millisecond },
		"rerun by the killed instance": func(r *clusterReport) { r.rerunBy = "i1" },
		"a wrong plan":                 func(r *clusterReport) { r.wrongPlans = []string{"bob"} },
		"an unclean stop":              func(r *clusterReport) { r.stopped["i2"] = errors.New("exit status 1") },
	}
	for name, breakIt := range breaks {
		r := good()
		breakIt(r)
		r.checks = r.runChecks()
		require.False(t, r.checks.ok(), name)
	}
}
