package pacer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

// explainEnv is what a case of TestExplain sets up and reads: the engine
// it runs on and the instant the bubble started at.
type explainEnv struct {
	mem *store.Memory // nil for the engine in the process
	t0  time.Time
}

// at returns the instant d after the bubble started.
func (e explainEnv) at(d time.Duration) time.Time { return e.t0.Add(d) }

// explainCase drives a Runner into a state and says what Explain must
// say of key "u1" then.
type explainCase struct {
	name string
	// memoryOnly skips the engine in the process, which cannot be paused.
	memoryOnly bool
	cfg        pacer.Config[string, int]
	// handler, when set, is the Runner's, which then runs.
	handler pacer.Handler[string, int]
	// setup adds values and lets time pass.
	setup func(t *testing.T, r *pacer.Runner[string, int], env explainEnv)
	// want is the Explanation (At and Key set by the test) and its
	// sentence, per engine.
	want func(env explainEnv) (pacer.Explanation, string)
}

// add adds v to key, failing the test on an error.
func add(t *testing.T, r *pacer.Runner[string, int], key string, v int) {
	t.Helper()
	require.NoError(t, r.Add(context.Background(), key, v))
}

// block is a handler that waits for its ctx to end and returns its cause.
func block(ctx context.Context, _ string, _ []int) error {
	<-ctx.Done()
	return context.Cause(ctx)
}

// firstLetter is a Config.Tenant: a key's first letter.
func firstLetter(key string) string { return key[:1] }

// fail is a handler that always fails with msg.
func fail(msg string) pacer.Handler[string, int] {
	return func(context.Context, string, []int) error { return errors.New(msg) }
}

func mustDaily(t *testing.T, start, end string) *window.Schedule {
	t.Helper()
	w, err := window.Daily(start, end, time.UTC)
	require.NoError(t, err)
	return &w
}

// opaqueLimiter is a Limiter that cannot say when its next token comes:
// its Wait blocks until ctx ends.
type opaqueLimiter struct{}

func (opaqueLimiter) Wait(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// opaquePauser is a Limiter that lets every call through and can be
// paused, but cannot say until when.
type opaquePauser struct{}

func (opaquePauser) Wait(context.Context) error { return nil }
func (opaquePauser) PauseFor(time.Duration)     {}

// explainCases are the reasons a key does not run, one per case. The
// bubble starts at 2000-01-01T00:00:00Z, so the sentences' times are
// fixed.
func explainCases(t *testing.T) []explainCase {
	const ms = time.Millisecond
	slow := mustBucket(t, ratelimit.BucketConfig{Rate: 1.0 / 60})
	return []explainCase{
		{
			name: "no values",
			want: func(explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{}, `key "u1" holds no values: nothing to explain`
			},
		},
		{
			name: "debouncing until its max wait",
			cfg:  pacer.Config[string, int]{Debounce: time.Second, MaxWait: 1500 * ms},
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
				time.Sleep(800 * ms)
				add(t, r, "u1", 2)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Debouncing, Values: 2, Until: env.at(1500 * ms), MaxWait: true, MaxAttempts: 25},
					`key "u1" is debouncing until 00:00:01.5Z (its max wait)`
			},
		},
		{
			name: "debouncing until its quiet period ends",
			cfg:  pacer.Config[string, int]{Debounce: time.Second},
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Debouncing, Values: 1, Until: env.at(time.Second), MaxAttempts: 25},
					`key "u1" is debouncing until 00:00:01Z (its quiet period)`
			},
		},
		{
			name: "ready behind other keys, the window closed",
			cfg:  pacer.Config[string, int]{Window: mustDaily(t, "09:00", "17:00")},
			setup: func(t *testing.T, r *pacer.Runner[string, int], env explainEnv) {
				add(t, r, "a", 1)
				add(t, r, "b", 1)
				time.Sleep(time.Second)
				add(t, r, "u1", 1)
				add(t, r, "u1", 2)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				x := pacer.Explanation{State: store.Ready, Values: 2, Ahead: 2, MaxAttempts: 25, WindowClosedUntil: env.at(9 * time.Hour)}
				if env.mem != nil {
					x.Since = env.at(time.Second)
					return x, `key "u1" is ready since 00:00:01Z with 2 keys ahead of it, and the window is closed until 09:00:00Z`
				}
				return x, `key "u1" is ready with 2 keys ahead of it, and the window is closed until 09:00:00Z`
			},
		},
		{
			name: "ready behind a key of its tenant and two tenants",
			cfg:  pacer.Config[string, int]{Tenant: firstLetter},
			setup: func(t *testing.T, r *pacer.Runner[string, int], env explainEnv) {
				add(t, r, "u0", 1) // u's first key
				add(t, r, "b1", 1) // tenants a and b come before u at the same virtual time, by name
				add(t, r, "a1", 1)
				add(t, r, "x1", 1) // and x after it
				time.Sleep(time.Second)
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				x := pacer.Explanation{State: store.Ready, Values: 1, Ahead: 1, TenantsAhead: 2, MaxAttempts: 25}
				if env.mem != nil {
					x.Since = env.at(time.Second)
					return x, `key "u1" is ready since 00:00:01Z with 1 key ahead of it in its tenant, its tenant's turn after 2 others`
				}
				return x, `key "u1" is ready with 1 key ahead of it in its tenant, its tenant's turn after 2 others`
			},
		},
		{
			name: "first of its tenant's keys, its tenant's turn first",
			cfg:  pacer.Config[string, int]{Tenant: firstLetter},
			setup: func(t *testing.T, r *pacer.Runner[string, int], env explainEnv) {
				add(t, r, "x1", 1)
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				x := pacer.Explanation{State: store.Ready, Values: 1, MaxAttempts: 25}
				if env.mem != nil {
					x.Since = env.at(0)
					return x, `key "u1" is ready since 00:00:00Z, next in line`
				}
				return x, `key "u1" is ready, next in line`
			},
		},
		{
			name:       "a paused key of a tenant behind another",
			memoryOnly: true,
			cfg:        pacer.Config[string, int]{Tenant: firstLetter},
			setup: func(t *testing.T, r *pacer.Runner[string, int], env explainEnv) {
				add(t, r, "a1", 1)
				add(t, r, "u1", 1)
				_, err := env.mem.PauseKey(context.Background(), "q", "u1")
				require.NoError(t, err)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Ready, Since: env.at(0), Values: 1, MaxAttempts: 25, KeyPaused: true},
					`key "u1" is ready since 00:00:00Z, next in line, and the key is paused by an operator`
			},
		},
		{
			name:       "the key and the queue paused by an operator",
			memoryOnly: true,
			setup: func(t *testing.T, r *pacer.Runner[string, int], env explainEnv) {
				add(t, r, "u1", 1)
				_, err := env.mem.PauseKey(context.Background(), "q", "u1")
				require.NoError(t, err)
				_, err = env.mem.PauseQueue(context.Background(), "q")
				require.NoError(t, err)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Ready, Since: env.at(0), Values: 1, MaxAttempts: 25, KeyPaused: true, QueuePaused: true},
					`key "u1" is ready since 00:00:00Z, next in line, the key is paused by an operator, and the queue is paused by an operator`
			},
		},
		{
			name:       "a key without values paused by an operator",
			memoryOnly: true,
			setup: func(t *testing.T, r *pacer.Runner[string, int], env explainEnv) {
				_, err := env.mem.PauseKey(context.Background(), "q", "u1")
				require.NoError(t, err)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{KeyPaused: true}, `key "u1" holds no values, and the key is paused by an operator`
			},
		},
		{
			name:    "leased",
			handler: block,
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
				time.Sleep(10 * time.Second)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				x := pacer.Explanation{State: store.Leased, Values: 1, Holder: "host:1", Attempt: 1, MaxAttempts: 25}
				if env.mem != nil {
					// Renewed every 10 s: at 10 s last, until 40 s.
					x.Since, x.Until = env.at(0), env.at(40*time.Second)
					return x, `key "u1" is leased by "host:1" since 00:00:00Z until 00:00:40Z, attempt 1 of 25`
				}
				return x, `key "u1" is leased by "host:1", attempt 1 of 25`
			},
		},
		{
			name:    "retrying",
			cfg:     pacer.Config[string, int]{Retry: pacer.Backoff{Initial: 5 * time.Second, Attempts: 5}},
			handler: fail("503 from api"),
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
				time.Sleep(6 * time.Second) // fails at 0 and at 5 s
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Retrying, Values: 1, Until: env.at(15 * time.Second), Attempt: 2, MaxAttempts: 5, Err: "503 from api"},
					`key "u1" is retrying at 00:00:15Z after attempt 2 of 5 (error: "503 from api")`
			},
		},
		{
			name:    "retrying for ever",
			cfg:     pacer.Config[string, int]{Retry: pacer.Backoff{Initial: time.Minute, Attempts: pacer.Unlimited}},
			handler: fail("boom"),
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Retrying, Values: 1, Until: env.at(time.Minute), Attempt: 1, MaxAttempts: pacer.Unlimited, Err: "boom"},
					`key "u1" is retrying at 00:01:00Z after attempt 1 of unlimited (error: "boom")`
			},
		},
		{
			name:    "held",
			cfg:     pacer.Config[string, int]{Retry: pacer.Backoff{Attempts: 2, Initial: time.Second}, Exhausted: pacer.ExhaustedHold},
			handler: fail("gone for good"),
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
				time.Sleep(time.Hour)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Held, Values: 1, Since: env.at(time.Second), Attempt: 2, MaxAttempts: 2, Err: "gone for good"},
					`key "u1" is held since 00:00:01Z until released (error: "gone for good")`
			},
		},
		{
			name:    "deferred by the window",
			cfg:     pacer.Config[string, int]{Window: mustDaily(t, "00:00", "00:01")},
			handler: block,
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
				time.Sleep(2 * time.Minute) // the window closed at 00:01 under the running batch
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				day := env.at(24 * time.Hour)
				return pacer.Explanation{State: store.Deferred, Values: 1, Until: day, Attempt: 1, MaxAttempts: 25, WindowClosedUntil: day},
					`key "u1" is deferred until 00:00:00Z, and the window is closed until 00:00:00Z`
			},
		},
		{
			name: "the limiter's next token",
			cfg:  pacer.Config[string, int]{Limiter: slow},
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				require.True(t, slow.Allow(), "the bucket's only token")
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				x := pacer.Explanation{State: store.Ready, Values: 1, MaxAttempts: 25, LimiterNextToken: env.at(time.Minute), RateLimited: true}
				if env.mem != nil {
					x.Since = env.at(0)
					return x, `key "u1" is ready since 00:00:00Z, next in line, and the limiter gives its next token at 00:01:00Z`
				}
				return x, `key "u1" is ready, next in line, and the limiter gives its next token at 00:01:00Z`
			},
		},
		{
			name: "the limiter paused by a Retry-After",
			cfg:  pacer.Config[string, int]{Limiter: mustBucket(t, ratelimit.BucketConfig{Rate: 100})},
			handler: func(ctx context.Context, key string, _ []int) error {
				if key == "u1" {
					return pacer.PauseAll(errors.New("429"), 30*time.Second)
				}
				return nil
			},
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Retrying, Values: 1, Until: env.at(30 * time.Second), Attempt: 1, MaxAttempts: 25, Err: "pause all for 30s: 429",
						LimiterPausedUntil: env.at(30 * time.Second), RateLimited: true},
					`key "u1" is retrying at 00:00:30Z after attempt 1 of 25 (error: "pause all for 30s: 429"), and the limiter is paused until 00:00:30Z (Retry-After)`
			},
		},
		{
			name: "a limiter that cannot say, paused by the Runner",
			cfg: pacer.Config[string, int]{
				Limiter: opaquePauser{},
			},
			handler: func(context.Context, string, []int) error {
				return pacer.PauseAll(errors.New("503"), 20*time.Second)
			},
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
				time.Sleep(5 * time.Second)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				return pacer.Explanation{State: store.Retrying, Values: 1, Until: env.at(20 * time.Second), Attempt: 1, MaxAttempts: 25, Err: "pause all for 20s: 503",
						LimiterPausedUntil: env.at(20 * time.Second), RateLimited: true},
					`key "u1" is retrying at 00:00:20Z after attempt 1 of 25 (error: "pause all for 20s: 503"), and the limiter is paused until 00:00:20Z (Retry-After)`
			},
		},
		{
			name:    "a limiter that cannot say, holding a batch back",
			cfg:     pacer.Config[string, int]{Limiter: opaqueLimiter{}},
			handler: block,
			setup: func(t *testing.T, r *pacer.Runner[string, int], _ explainEnv) {
				add(t, r, "u1", 1)
			},
			want: func(env explainEnv) (pacer.Explanation, string) {
				x := pacer.Explanation{State: store.Leased, Values: 1, Holder: "host:1", Attempt: 1, MaxAttempts: 25, RateLimited: true}
				if env.mem != nil {
					x.Since, x.Until = env.at(0), env.at(30*time.Second)
					return x, `key "u1" is leased by "host:1" since 00:00:00Z until 00:00:30Z, attempt 1 of 25, and it is rate-limited`
				}
				return x, `key "u1" is leased by "host:1", attempt 1 of 25, and it is rate-limited`
			},
		},
	}
}

func mustBucket(t *testing.T, cfg ratelimit.BucketConfig) *ratelimit.Bucket {
	t.Helper()
	b, err := ratelimit.NewBucket(cfg)
	require.NoError(t, err)
	return b
}

// TestExplain drives a Runner into each reason a key does not run, on the
// engine in the process and on a Memory store, and checks what Explain
// says, in fields and in a sentence.
func TestExplain(t *testing.T) {
	for _, engine := range []string{"in process", "memory"} {
		t.Run(engine, func(t *testing.T) {
			for i, c := range explainCases(t) {
				if c.memoryOnly && engine != "memory" {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						// Made inside the bubble: its limiters and windows
						// read the bubble's clock.
						c := explainCases(t)[i]
						env := explainEnv{t0: time.Now()}
						cfg := c.cfg
						cfg.Instance = "host:1"
						if engine == "memory" {
							env.mem = store.NewMemory(store.MemoryConfig{})
							cfg.Store, cfg.Name = env.mem, "q"
						}
						h := c.handler
						if h == nil {
							h = func(context.Context, string, []int) error { return nil }
						}
						r, err := pacer.New(cfg, h)
						require.NoError(t, err)
						ctx, cancel := context.WithCancel(context.Background())
						done := make(chan error, 1)
						if c.handler != nil {
							go func() { done <- r.Run(ctx) }()
						}
						if c.setup != nil {
							c.setup(t, r, env)
						}
						synctest.Wait()
						want, sentence := c.want(env)
						got, err := r.Explain(context.Background(), "u1")
						require.NoError(t, err)
						want.Key, want.At = "u1", time.Now()
						if env.mem != nil {
							want.StoredKey = "u1"
						}
						require.Equal(t, inUTC(want), inUTC(got))
						require.Equal(t, sentence, got.String())

						cancel()
						if c.handler != nil {
							require.ErrorIs(t, <-done, context.Canceled)
						}
						sctx, stop := context.WithTimeout(context.Background(), time.Minute)
						defer stop()
						_ = r.Shutdown(sctx) // what is left, held keys, may go to OnDrop
					})
				})
			}
		})
	}
}

// inUTC returns x with its times in UTC and without monotonic readings,
// so that equal instants compare equal.
func inUTC(x pacer.Explanation) pacer.Explanation {
	for _, t := range []*time.Time{&x.At, &x.Since, &x.Until, &x.WindowClosedUntil, &x.LimiterPausedUntil, &x.LimiterNextToken, &x.KeyWindowClosedUntil, &x.KeyTokenAt} {
		*t = t.Round(0).UTC()
	}
	return x
}

// innerStore is a store without the Inspector of the one it wraps.
type innerStore struct{ store.Store }

func TestExplainWithoutInspector(t *testing.T) {
	r, err := pacer.New(pacer.Config[string, int]{Store: innerStore{store.NewMemory(store.MemoryConfig{})}, Name: "q"},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(context.Background())
	_, err = r.Explain(context.Background(), "u1")
	require.ErrorIs(t, err, pacer.ErrNoInspector)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Explain(ctx, "u1")
	require.ErrorIs(t, err, context.Canceled)
}

// ExplainStored says what the engine knows, of a stored key.
func TestExplainStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory(store.MemoryConfig{})
		t0 := time.Now()
		require.NoError(t, mem.Add(context.Background(), "q", "k\x00", [][]byte{[]byte("1")}, store.AddParams{Wait: time.Second}))
		got, err := pacer.ExplainStored(context.Background(), mem, "q", "k\x00")
		require.NoError(t, err)
		require.Equal(t, inUTC(pacer.Explanation{Key: "k\x00", StoredKey: "k\x00", At: t0, State: store.Debouncing, Values: 1, Until: t0.Add(time.Second)}), inUTC(got))
		require.Equal(t, `key "k\x00" is debouncing until 00:00:01Z (its quiet period)`, got.String())

		got, err = pacer.ExplainStored(context.Background(), mem, "q", "other")
		require.NoError(t, err)
		require.Equal(t, inUTC(pacer.Explanation{Key: "other", StoredKey: "other", At: t0}), inUTC(got))

		_, err = pacer.ExplainStored(context.Background(), nil, "q", "k")
		require.EqualError(t, err, "pacer: ExplainStored needs a store.Inspector, got nil")
	})
}
