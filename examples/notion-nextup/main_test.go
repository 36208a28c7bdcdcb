package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/ratelimit"
)

// asProgram, set to 1 in the environment, makes this test binary run the
// program itself (main, with the arguments after the binary's name): the
// tests that need the program as an OS process start it so.
const asProgram = "NEXTUP_AS_PROGRAM"

func TestMain(m *testing.M) {
	if os.Getenv(asProgram) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// program returns a command that runs the program with args.
func program(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asProgram+"=1")
	return cmd
}

// runDemoInProcess plays the demo on fake time with the production
// durations, the fake API and the webhook reached in process.
func runDemoInProcess(t *testing.T, workers int, adaptive time.Duration) *report {
	t.Helper()
	fake := newDemoAPI(3, 3, time.Now)
	cfg := appConfig{
		APIURL: "http://tasks.invalid", Secret: []byte("s3cret"),
		Rate: 3, Burst: 3, Debounce: 5 * time.Second, MaxWait: 15 * time.Second, Workers: workers, Adaptive: adaptive,
		Base: hookhttp.InProcess{Handler: fake},
	}
	d, routes, err := newDemo(cfg, fake)
	require.NoError(t, err)
	hook := &http.Client{Transport: hookhttp.InProcess{Handler: routes}}
	d.post = hookhttp.PostJSON(hook, "http://nextup.invalid/webhook")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	rep, err := d.run(ctx)
	require.NoError(t, err)
	return rep
}

func TestDemo(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(map[int]string{1: "one worker", 2: "two workers"}[workers], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rep := runDemoInProcess(t, workers, 0)
				var out bytes.Buffer
				rep.print(&out)
				t.Log("\n" + out.String())
				for _, c := range rep.checks {
					require.True(t, c.ok, "check failed: %s\n%s", c.name, out.String())
				}
				require.True(t, rep.checks.ok())

				require.Equal(t, map[string]int{"alice": 5, "bob": 5, "carol": 3, "dave": 13, "mallory": 1}, rep.events)
				require.Equal(t, 27+2, rep.statuses[202], "27 events queued, 2 without an assignee")
				require.Equal(t, 1, rep.runs["alice"], "alice's burst coalesced into one run")
				require.Equal(t, 2, rep.runs["carol"], "one failed query, one retry")
				require.Equal(t, 1, rep.retries["carol"])
				require.Equal(t, 1, rep.runs["mallory"])
				require.ErrorContains(t, rep.dropped["mallory"], "404")
				require.Equal(t, 1, rep.api.Throttled, "only the warm-up request is throttled")
				require.Zero(t, rep.api.ThrottledWarm)
				require.Equal(t, 1, rep.api.Failed)
				require.Contains(t, out.String(), "429s: 1 (0 after warm-up)")
				// dave edits every 2.5 s for 30 s: the 15 s max-wait queues
				// him at least twice while he is still typing.
				require.GreaterOrEqual(t, len(rep.bursts["dave"]), 2)
				require.Equal(t, 15*time.Second, rep.bursts["dave"][0].waited)
			})
		})
	}
}

// TestDemoAdaptive plays the demo with an adaptive debounce, where a 429
// is not retried by the transport but reaches the Runner, which runs the
// user again: every check still holds.
func TestDemoAdaptive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep := runDemoInProcess(t, 1, time.Minute)
		var out bytes.Buffer
		rep.print(&out)
		t.Log("\n" + out.String())
		for _, c := range rep.checks {
			require.True(t, c.ok, "check failed: %s\n%s", c.name, out.String())
		}
		require.Equal(t, 1, rep.api.Throttled, "only the warm-up request is throttled")
		retried := 0
		for _, n := range rep.retries {
			retried += n
		}
		require.Equal(t, 2, retried, "carol's 500 and the warm-up 429 were retried")
	})
}

// TestUnknownUserDroppedAfter429 sends one event for a user the API does
// not know, whose first query gets a 429 (the API's budget starts spent):
// with an adaptive debounce the Runner runs the user again, whose query
// then gets a 404 and is dropped. The check holds: the 404 was not
// retried. A second 404 would fail it.
func TestUnknownUserDroppedAfter429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newDemoAPI(3, 3, time.Now)
		obs := newObserver()
		runner, _, err := newApp(appConfig{
			APIURL: "http://tasks.invalid", Rate: 3, Burst: 3,
			Debounce: 5 * time.Second, MaxWait: 15 * time.Second, Adaptive: time.Minute,
			Base: hookhttp.InProcess{Handler: fake}, Observer: obs,
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- runner.Run(ctx) }()
		require.NoError(t, runner.Add(ctx, "mallory", Event{Type: "task.updated", Assignee: "mallory"}))
		for {
			time.Sleep(time.Second)
			idle, err := idle(ctx, runner)
			require.NoError(t, err)
			if idle {
				break
			}
		}
		require.NoError(t, runner.Shutdown(ctx))
		cancel()
		<-done

		r := &report{runs: obs.calls, retries: obs.retries, dropped: obs.dropped, api: fake.snapshot()}
		require.Equal(t, 2, r.runs["mallory"], "a 429, then a 404")
		require.Equal(t, 1, r.retries["mallory"], "the 429 was retried")
		require.Equal(t, 1, r.api.Throttled)
		require.True(t, r.droppedAtFirst404("mallory"))

		r.api.NotFound["mallory"]++
		require.False(t, r.droppedAtFirst404("mallory"), "a 404 asked again is a retry")
		r.api.NotFound["mallory"] = 1
		r.dropped = nil
		require.False(t, r.droppedAtFirst404("mallory"), "not dropped")
	})
}

func TestPlan(t *testing.T) {
	// 2026-11-20 is a Friday.
	start, _ := time.Parse(dateLayout, "2026-11-20")
	tasks := []Task{
		{ID: "late", Priority: 2, Due: "2026-12-01", Estimate: 1},
		{ID: "undated", Priority: 2, Estimate: 2},
		{ID: "urgent", Priority: 1, Estimate: 1},
		{ID: "soon", Priority: 2, Due: "2026-11-25", Estimate: 3},
		{ID: "done", Priority: 1, Done: true, Rank: 4, Projected: "2026-11-01"},
		{ID: "zero", Priority: 3, Estimate: 0},
	}
	want := []Update{
		{ID: "urgent", Rank: 1, Projected: "2026-11-20"},  // Fri
		{ID: "soon", Rank: 2, Projected: "2026-11-25"},    // Mon, Tue, Wed
		{ID: "late", Rank: 3, Projected: "2026-11-26"},    // Thu
		{ID: "undated", Rank: 4, Projected: "2026-11-30"}, // Fri, Mon
		{ID: "zero", Rank: 5, Projected: "2026-12-01"},    // counts as 1 day
		{ID: "done"},
	}
	require.Equal(t, want, plan(tasks, start))

	// Starting on a Sunday starts on Monday.
	sunday, _ := time.Parse(dateLayout, "2026-11-22")
	require.Equal(t, "2026-11-23", plan([]Task{{ID: "x", Estimate: 1}}, sunday)[0].Projected)
}

func TestChangedWritesOnlyDifferences(t *testing.T) {
	tasks := []Task{
		{ID: "a", Rank: 1, Projected: "2026-11-20"},
		{ID: "b", Rank: 3, Projected: "2026-11-23"},
		{ID: "c", Done: true},
	}
	want := []Update{{ID: "a", Rank: 1, Projected: "2026-11-20"}, {ID: "b", Rank: 2, Projected: "2026-11-23"}, {ID: "c"}}
	require.Equal(t, []Update{{ID: "b", Rank: 2, Projected: "2026-11-23"}}, changed(tasks, want))
}

func TestAddBusinessDays(t *testing.T) {
	fri, _ := time.Parse(dateLayout, "2026-11-20")
	for n, want := range []string{"2026-11-20", "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-30"} {
		require.Equal(t, want, addBusinessDays(fri, n).Format(dateLayout), "n=%d", n)
	}
	sat := fri.AddDate(0, 0, 1)
	require.Equal(t, "2026-11-23", addBusinessDays(sat, 0).Format(dateLayout))
	require.Equal(t, "2026-11-24", addBusinessDays(sat, 1).Format(dateLayout))
}

func TestWebhook(t *testing.T) {
	secret := []byte("s3cret")
	good := []byte(`{"type":"task.updated","task_id":"a1","assignee":"alice"}`)
	cases := []struct {
		name    string
		method  string
		body    []byte
		sig     string
		closed  bool
		status  int
		queued  bool
		skipped bool
	}{
		{name: "queued", body: good, sig: hookhttp.Sign(secret, good), status: 202, queued: true},
		{name: "no assignee", body: []byte(`{"type":"task.updated","task_id":"a1"}`), sig: hookhttp.Sign(secret, []byte(`{"type":"task.updated","task_id":"a1"}`)), status: 202, skipped: true},
		{name: "wrong signature", body: good, sig: hookhttp.Sign([]byte("other"), good), status: 401},
		{name: "missing signature", body: good, status: 401},
		{name: "signature not hex", body: good, sig: "sha256=zz", status: 401},
		{name: "bad JSON", body: []byte("{"), sig: hookhttp.Sign(secret, []byte("{")), status: 400},
		{name: "too large", body: bytes.Repeat([]byte(" "), maxBody+1), status: 413},
		{name: "GET", method: http.MethodGet, status: 405},
		{name: "closed", body: good, sig: hookhttp.Sign(secret, good), closed: true, status: 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			h := &webhook{secret: secret, now: time.Now, log: discard(),
				enqueue: func(_ context.Context, user string, ev Event) error {
					if c.closed {
						return pacer.ErrClosed
					}
					got = append(got, user+"/"+ev.TaskID)
					return nil
				}}
			method := c.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, "/webhook", bytes.NewReader(c.body))
			if c.sig != "" {
				req.Header.Set(hookhttp.SignatureHeader, c.sig)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, c.status, rec.Code, rec.Body.String())
			if c.queued {
				require.Equal(t, []string{"alice/a1"}, got)
			} else {
				require.Empty(t, got)
			}
			require.Equal(t, c.skipped, h.skipped.Load() == 1)
		})
	}
	// Without a secret, signatures are not checked.
	h := &webhook{now: time.Now, log: discard(), enqueue: func(context.Context, string, Event) error { return nil }}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(good)))
	require.Equal(t, 202, rec.Code)
}

// GET /stats shows the Runner's and the bucket's figures as a person
// reads them: snake_case names, durations in seconds, times in RFC 3339.
// The demo API's first answer is a 429, which makes the bucket pause.
func TestStatsRoute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newDemoAPI(3, 3, time.Now)
		runner, routes, err := newApp(appConfig{
			APIURL: "http://tasks.invalid", Rate: 3, Burst: 3, Debounce: 5 * time.Second, MaxWait: 15 * time.Second, Workers: 1,
			Base: hookhttp.InProcess{Handler: fake}, Logger: discard(),
		})
		require.NoError(t, err)
		get := func() (map[string]map[string]any, string) {
			rec := httptest.NewRecorder()
			routes.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/stats", nil))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var m map[string]map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m), rec.Body.String())
			return m, rec.Body.String()
		}
		rec := httptest.NewRecorder()
		routes.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(eventBody("task.updated", "a1", "alice"))))
		require.Equal(t, http.StatusAccepted, rec.Code)

		m, body := get()
		require.Equal(t, 1.0, m["runner"]["received"], body)
		require.Equal(t, 1.0, m["runner"]["pending"], body)
		require.Equal(t, 5.0, m["runner"]["debounce_seconds"], body)
		require.Equal(t, 0.0, m["runner"]["rate_limit_wait_seconds"], body)
		require.Equal(t, 3.0, m["bucket"]["rate"], body)
		require.NotContains(t, m["bucket"], "paused_until", "never paused: "+body)

		require.NoError(t, runner.Shutdown(t.Context())) // runs alice: a 429, its pause, then her plan
		m, body = get()
		require.Equal(t, 1.0, m["runner"]["handled"], body)
		require.Greater(t, m["runner"]["rate_limit_wait_seconds"], 0.0, body)
		require.Equal(t, 1.0, m["bucket"]["pauses"], body)
		require.Greater(t, m["bucket"]["wait_time_seconds"], 0.0, body)
		until, err := time.Parse(time.RFC3339Nano, m["bucket"]["paused_until"].(string))
		require.NoError(t, err, body)
		require.Equal(t, time.UTC, until.Location(), body)

		// The program's own Go types read it back.
		var st struct {
			Runner pacer.Stats
			Bucket ratelimit.Stats
		}
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		want, err := runner.Stats(t.Context())
		require.NoError(t, err)
		require.Equal(t, want, st.Runner)
		require.True(t, until.Equal(st.Bucket.PausedUntil))
	})
}

func TestFakeAPIRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(3, 3, false, time.Now)
		f.put(Task{ID: "t1", Assignee: "alice"})
		call := func() *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/tasks/query", strings.NewReader(`{"assignee":"alice"}`)))
			return rec
		}
		for range 3 {
			require.Equal(t, 200, call().Code, "the burst passes")
		}
		rec := call()
		require.Equal(t, 429, rec.Code, "a fourth at once is too many")
		require.Equal(t, "1", rec.Header().Get("Retry-After"))
		time.Sleep(time.Second / 3)
		require.Equal(t, 200, call().Code, "one more after a third of a second")
		require.Equal(t, 429, call().Code)
		s := f.snapshot()
		require.Equal(t, 2, s.Throttled)
		require.Equal(t, 6, s.Calls)
		require.Equal(t, 6, s.Peak)
	})
}

func TestFakeAPIDrainedStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(3, 3, true, time.Now)
		f.put(Task{ID: "t1", Assignee: "alice"})
		rec := httptest.NewRecorder()
		time.Sleep(time.Minute) // the budget is spent when the first request comes, however late
		f.ServeHTTP(rec, httptest.NewRequest(http.MethodPatch, "/v1/tasks/t1", strings.NewReader(`{"rank":1}`)))
		require.Equal(t, 429, rec.Code)
		require.Equal(t, 0, f.snapshot().ThrottledWarm, "a 429 before any success is warm-up")
	})
}

func TestPeakPerSecond(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	require.Equal(t, 0, peakPerSecond(nil))
	require.Equal(t, 3, peakPerSecond(at(0, 0, 0, 1000, 2000)))
	require.Equal(t, 4, peakPerSecond(at(0, 0, 0, 999, 2000)))
	require.Equal(t, 3, peakPerSecond(at(0, 500, 999, 1600)))
}

func TestClassify(t *testing.T) {
	status := func(code int) error { return &statusError{Status: code} }
	var other error = errors.New("connection reset")
	require.Same(t, other, classify(other), "network errors are transient")
	require.Equal(t, status(500), classify(status(500)), "5xx is transient")
	require.ErrorContains(t, classify(status(404)), "permanent")
	require.ErrorContains(t, classify(status(401)), "permanent")

	// A 429 or 503 comes back from the client as a ratelimit.LimitError,
	// which classify leaves to the Runner.
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(code)
		})
		c := &client{base: "http://tasks.invalid", hc: &http.Client{Transport: hookhttp.InProcess{Handler: api}}}
		_, err := c.listTasks(t.Context(), "ada")
		var le *ratelimit.LimitError
		require.ErrorAs(t, err, &le)
		require.Equal(t, ratelimit.LimitError{StatusCode: code, RetryAfter: 2 * time.Second}, *le)
		require.Same(t, err, classify(err))
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// idle reports whether runner has no user waiting, queued or being processed.
func idle(ctx context.Context, runner *pacer.Runner[string, Event]) (bool, error) {
	s, err := runner.Stats(ctx)
	return err == nil && statsIdle(s), err
}

func TestAdaptiveDebounceGrowsOn429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The API allows less than the client sends: 429s are certain.
		fake := newFakeAPI(1, 1, false, time.Now)
		for _, task := range demoTasks() {
			fake.put(task)
		}
		cfg := appConfig{
			APIURL: "http://tasks.invalid", Rate: 3, Burst: 3,
			Debounce: 5 * time.Second, MaxWait: 15 * time.Second, Adaptive: time.Minute,
			Base: hookhttp.InProcess{Handler: fake},
		}
		runner, _, err := newApp(cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- runner.Run(ctx) }()
		for _, u := range demoUsers {
			require.NoError(t, runner.Add(ctx, u, Event{Type: "task.updated", Assignee: u}))
		}
		longest := time.Duration(0)
		for {
			idle, err := idle(ctx, runner)
			require.NoError(t, err)
			if idle {
				break
			}
			time.Sleep(time.Second)
			st, err := runner.Stats(ctx)
			require.NoError(t, err)
			longest = max(longest, st.Debounce)
		}
		require.Positive(t, fake.snapshot().Throttled)
		require.Greater(t, longest, cfg.Debounce, "429s lengthened the debounce")
		require.NoError(t, runner.Shutdown(ctx))
		cancel()
		<-done
	})
}
