package pacer_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// The sentence of each state, and the order of several reasons: the
// state first, then the operator's pauses, then the reasons with an end,
// latest first, then a rate limit of unknown end.
func TestExplanationString(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 14, 3, 0, 0, time.UTC)
	later := func(d time.Duration) time.Time { return at.Add(d) }
	for _, c := range []struct {
		x    pacer.Explanation
		want string
	}{
		{pacer.Explanation{Key: "u1", State: store.Ready, Ahead: 1},
			`key "u1" is ready with 1 key ahead of it`},
		{pacer.Explanation{Key: "u1", State: store.Ready, Ahead: store.MaxAhead},
			`key "u1" is ready with at least 10000 keys ahead of it`},
		{pacer.Explanation{Key: "u1", State: store.Ready, Ahead: 3, TenantsAhead: 2},
			`key "u1" is ready with 3 keys ahead of it in its tenant, its tenant's turn after 2 others`},
		{pacer.Explanation{Key: "u1", State: store.Ready, Ahead: 1, TenantsAhead: 1},
			`key "u1" is ready with 1 key ahead of it in its tenant, its tenant's turn after 1 other`},
		{pacer.Explanation{Key: "u1", State: store.Ready, TenantsAhead: 4},
			`key "u1" is ready, first of its tenant's keys, its tenant's turn after 4 others`},
		{pacer.Explanation{Key: "u1", State: store.Ready, Ahead: store.MaxAhead, TenantsAhead: store.MaxAhead},
			`key "u1" is ready with at least 10000 keys ahead of it in its tenant, its tenant's turn after at least 10000 others`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Ready, Ahead: 2, TenantsAhead: 1, Err: "503", WindowClosedUntil: later(time.Hour)},
			`key "u1" is ready with 2 keys ahead of it in its tenant, its tenant's turn after 1 other (last error: "503"), and the window is closed until 15:03:00Z`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Ready, Err: "503", Attempt: 0},
			`key "u1" is ready, next in line (last error: "503")`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Leased, Since: at, Until: later(30 * time.Second), Attempt: 3, Err: "timeout"},
			`key "u1" is leased since 14:03:00Z until 14:03:30Z, attempt 3 (last error: "timeout")`},
		{pacer.Explanation{Key: "u1", State: store.Leased, Attempt: 1, Leases: 2, PerKey: 3},
			`key "u1" is leased, attempt 1 (2 of 3 batches running)`},
		{pacer.Explanation{Key: "u1", State: store.Leased, Attempt: 1, PerKey: 3},
			`key "u1" is leased, attempt 1 (1 of 3 batches running)`},
		{pacer.Explanation{Key: "u1", State: store.Leased, Attempt: 1, Leases: 2},
			`key "u1" is leased, attempt 1 (2 batches running)`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Retrying, Until: later(5 * time.Second), Attempt: 2, MaxAttempts: 5, Err: "503 from api",
			WindowClosedUntil: later(18*time.Hour + 57*time.Minute)},
			`key "u1" is retrying at 14:03:05Z after attempt 2 of 5 (error: "503 from api"), and the window is closed until 09:00:00Z`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Retrying, Until: later(time.Second), Attempt: 1},
			`key "u1" is retrying at 14:03:01Z after attempt 1`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Held},
			`key "u1" is held until released`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Deferred, Until: later(48 * time.Hour), Err: "x"},
			`key "u1" is deferred until 2025-03-03T14:03:00Z (last error: "x")`},
		{pacer.Explanation{Key: `{"id":1}`, At: at, State: store.Debouncing, Until: later(1500 * time.Millisecond)},
			`key "{\"id\":1}" is debouncing until 14:03:01.5Z (its quiet period)`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Ready, Ahead: 3,
			RateLimited: true, LimiterNextToken: later(2 * time.Second), LimiterPausedUntil: later(time.Second),
			WindowClosedUntil: later(time.Hour), QueuePaused: true, KeyPaused: true},
			`key "u1" is ready with 3 keys ahead of it, the key is paused by an operator, the queue is paused by an operator, ` +
				`the window is closed until 15:03:00Z, the limiter gives its next token at 14:03:02Z, and the limiter is paused until 14:03:01Z (Retry-After)`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Deferred, Until: later(time.Minute), KeyTokenAt: later(time.Minute), Err: "x"},
			`key "u1" is waiting for its key's token until 14:04:00Z (last error: "x")`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Deferred, Until: later(time.Hour), KeyWindowClosedUntil: later(time.Hour),
			WindowClosedUntil: later(2 * time.Hour), KeyTokenAt: later(time.Second)},
			`key "u1" is deferred until 15:03:00Z, the window is closed until 16:03:00Z, it is outside its window until 15:03:00Z, ` +
				`and it is waiting for its key's token until 14:03:01Z`},
		{pacer.Explanation{Key: "u1", At: at, State: store.Ready, RateLimited: true},
			`key "u1" is ready, next in line, and it is rate-limited`},
		{pacer.Explanation{Key: "u1", At: at, QueuePaused: true},
			`key "u1" holds no values, and the queue is paused by an operator`},
	} {
		require.Equal(t, c.want, c.x.String())
	}
}

var fullExplanation = pacer.Explanation{
	Key: "u1", StoredKey: "u1\x00", At: time.Date(2025, 3, 1, 15, 3, 0, 0, time.FixedZone("CET", 3600)),
	State: store.Retrying, Values: 3, Since: time.Date(2025, 3, 1, 14, 2, 0, 0, time.UTC), Until: time.Date(2025, 3, 1, 14, 3, 5, 500_000_000, time.UTC),
	MaxWait: true, Ahead: 4, TenantsAhead: 5, Holder: "host:1", Leases: 2, PerKey: 3, Attempt: 2, MaxAttempts: pacer.Unlimited, Err: "503 from api",
	KeyPaused: true, QueuePaused: true,
	WindowClosedUntil:    time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC),
	LimiterPausedUntil:   time.Date(2025, 3, 1, 14, 4, 0, 0, time.UTC),
	LimiterNextToken:     time.Date(2025, 3, 1, 14, 4, 1, 0, time.UTC),
	RateLimited:          true,
	KeyWindowClosedUntil: time.Date(2025, 3, 1, 18, 0, 0, 0, time.UTC),
	KeyTokenAt:           time.Date(2025, 3, 1, 14, 5, 0, 0, time.UTC),
}

func TestExplanationJSON(t *testing.T) {
	t.Parallel()
	requireAllSet(t, fullExplanation)
	for _, c := range []struct {
		name string
		x    pacer.Explanation
		json string
	}{
		{"zero", pacer.Explanation{}, `{"key":"","state":"","values":0,"attempt":0}`},
		{"full", fullExplanation,
			`{"key":"u1","stored_key":"u1\u0000","state":"retrying","values":3,"max_wait":true,"ahead":4,"tenants_ahead":5,"holder":"host:1","leases":2,"per_key":3,` +
				`"attempt":2,"max_attempts":-1,"error":"503 from api","key_paused":true,"queue_paused":true,"rate_limited":true,` +
				`"at":"2025-03-01T14:03:00Z","since":"2025-03-01T14:02:00Z","until":"2025-03-01T14:03:05.5Z",` +
				`"window_closed_until":"2025-03-02T09:00:00Z","limiter_paused_until":"2025-03-01T14:04:00Z","limiter_next_token":"2025-03-01T14:04:01Z",` +
				`"key_window_closed_until":"2025-03-01T18:00:00Z","key_token_at":"2025-03-01T14:05:00Z"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(c.x)
			require.NoError(t, err)
			require.Equal(t, c.json, string(got))
			var back pacer.Explanation
			require.NoError(t, json.Unmarshal(got, &back))
			require.Equal(t, inUTC(c.x), inUTC(back))
		})
	}
}
