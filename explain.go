package pacer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pacerkit/pacer/internal/jsonfield"
	"github.com/pacerkit/pacer/store"
)

// An Explanation says why a key is not running now: what its values are
// doing in the engine (its State, with the times, the attempt and the
// error that go with it) and what else holds it back: an operator's pause
// of the key or of the queue, and, from a Runner, its Config.Window and
// Config.Limiter, and the key's own window and limit (Config.KeyWindow,
// Config.KeyLimit). Several reasons may hold at once, and it keeps them
// all. [Runner.Explain] and [ExplainStored] make one; String says it in
// one sentence.
//
// The times are those of the engine (the state's) and of the Runner's
// clock (the windows' and the limiter's; the key's limit tells a wait,
// which is added to At). In JSON the names are as the
// tags say, the state by name, the times in RFC 3339 in UTC; a field
// whose zero means "none" (a time, an error, a holder, a false) is left
// out, the counts (values, attempt) are always there:
//
//	{"key":"u1","stored_key":"u1","state":"retrying","values":2,"attempt":2,"max_attempts":5,
//	 "error":"503 from api","at":"2025-03-01T14:03:00Z","until":"2025-03-01T14:03:05Z",
//	 "window_closed_until":"2025-03-02T09:00:00Z"}
type Explanation struct {
	// Key is the key as a person reads it: a Runner's K formatted as
	// RunnerView.FormatKey does, or for ExplainStored the stored key.
	Key string `json:"key"`
	// StoredKey is the key as the engine stores it, "" for a Runner
	// without a Config.Store.
	StoredKey string `json:"stored_key,omitempty"`
	// At is when the explanation was made, on the Runner's clock (for
	// ExplainStored, on the process's).
	At time.Time `json:"at,omitzero"`

	// State is what the key's head batch is doing (store.KeyState); 0,
	// "empty", when the key holds no values.
	State store.KeyState `json:"state"`
	// Values counts the key's values, those of an open burst included.
	Values int `json:"values"`
	// Since and Until are the state's, as store.KeyInfo has them: ready,
	// leased or held since; debouncing until the burst's deadline (its
	// max wait when MaxWait), leased until the lease lapses unless
	// renewed, retrying or deferred until the delay ends. Zero when the
	// engine does not tell: the engine in the process reads no clock when
	// a key becomes ready or is leased, and its leases never lapse.
	Since   time.Time `json:"since,omitzero"`
	Until   time.Time `json:"until,omitzero"`
	MaxWait bool      `json:"max_wait,omitempty"`
	// Ahead is, for a Ready key, how many ready keys come before it,
	// counted up to store.MaxAhead. With Config.Tenant, it counts the
	// ready keys of the key's own tenant before it: the turns of the
	// other tenants come in between, in proportion to their weights, and
	// TenantsAhead counts those before its tenant's next turn.
	Ahead int `json:"ahead,omitempty"`
	// TenantsAhead is, for a Ready key with Config.Tenant, how many other
	// tenants with ready keys take a turn before the key's tenant takes
	// its next one (store.KeyInfo.TenantsAhead: by virtual time, ties to
	// the smaller name; the key's own tenant is not counted), up to
	// store.MaxAhead; 0 for a paused key, in any other state, and without
	// tenants. The key itself is leased at its tenant's turn Ahead+1.
	TenantsAhead int `json:"tenants_ahead,omitempty"`
	// Holder names the instance that holds a Leased key.
	Holder string `json:"holder,omitempty"`
	// Leases counts a Leased key's batches out at once when there are
	// several (store.KeyInfo.Leases; Config.PerKey above 1), 0 otherwise;
	// PerKey is the Runner's Config.PerKey when above 1, 0 otherwise (and
	// for ExplainStored): how many it may run at once.
	Leases int `json:"leases,omitempty"`
	PerKey int `json:"per_key,omitempty"`
	// Attempt is the head batch's last attempt (store.KeyInfo.Attempt):
	// the one running, or the one that failed.
	Attempt int `json:"attempt"`
	// MaxAttempts is the Runner's Config.Retry.Attempts, Unlimited (-1)
	// when it retries for ever; 0 when unknown (ExplainStored).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Err is the error of the head batch's last Retry or Hold.
	Err string `json:"error,omitempty"`

	// KeyPaused and QueuePaused report an operator's pause of the key or
	// of its queue (store.Operator): nothing of the key is leased until
	// the pause ends.
	KeyPaused   bool `json:"key_paused,omitempty"`
	QueuePaused bool `json:"queue_paused,omitempty"`
	// WindowClosedUntil is, when the Runner's Config.Window is closed,
	// when it opens next.
	WindowClosedUntil time.Time `json:"window_closed_until,omitzero"`
	// LimiterPausedUntil is when a pause of the Runner's Config.Limiter
	// (a Retry-After, see PauseAll) ends, while one is in effect.
	LimiterPausedUntil time.Time `json:"limiter_paused_until,omitzero"`
	// LimiterNextToken is when the Limiter gives its next token, when
	// that is later than At (and than the end of its pause).
	LimiterNextToken time.Time `json:"limiter_next_token,omitzero"`
	// RateLimited reports that the Limiter holds batches back now: it is
	// set with either time above, and alone for a Limiter that cannot say
	// until when, while a batch of the Runner is in its Wait.
	RateLimited bool `json:"rate_limited,omitempty"`
	// KeyWindowClosedUntil is, when the key is outside its own window
	// (the Runner's Config.KeyWindow), when that window opens next.
	KeyWindowClosedUntil time.Time `json:"key_window_closed_until,omitzero"`
	// KeyTokenAt is, when the key's own limit (the Runner's
	// Config.KeyLimit, or Config.KeyRate) has no token for it now, when it
	// has one, if no one else takes the key's tokens meanwhile (after a
	// pause of the key, which it includes). For a KeyRate kept by the
	// store, it is the time the store deferred the key to
	// (store.KeyInfo.ForToken).
	KeyTokenAt time.Time `json:"key_token_at,omitzero"`
}

// String says x in one English sentence, for example:
//
//	key "u1" is retrying at 14:03:05Z after attempt 2 of 5 (error: "503 from api"), and the window is closed until 09:00:00Z
//	key "u1" is ready with 3 keys ahead of it in its tenant, its tenant's turn after 2 others
//
// A ready key says where it stands: next in line, or how many keys are
// ahead of it; with other tenants first (TenantsAhead), those keys are its
// tenant's (Ahead), and it says how many tenants take their turn before
// its tenant's. With no tenant first it says nothing of tenants.
//
// The key's state comes first. The other reasons follow, the one that
// holds the key longest first: the operator's pauses, which only a person
// ends, then those with an end, latest first, then a rate limit of
// unknown end. The first of them is thus what the key waits for last. A
// time within a day of At shows its time of day in UTC, any other its
// date too.
func (x Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "key %q %s", x.Key, x.stateClause())
	reasons := x.reasons()
	if x.State == 0 && len(reasons) == 0 {
		b.WriteString(": nothing to explain")
	}
	for i, r := range reasons {
		switch {
		case i == len(reasons)-1:
			b.WriteString(", and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(r)
	}
	return b.String()
}

// stateClause says what the key's values are doing.
func (x Explanation) stateClause() string {
	var b strings.Builder
	switch x.State {
	case 0:
		return "holds no values"
	case store.Debouncing:
		fmt.Fprintf(&b, "is debouncing until %s", x.clock(x.Until))
		if x.MaxWait {
			b.WriteString(" (its max wait)")
		} else {
			b.WriteString(" (its quiet period)")
		}
	case store.Ready:
		b.WriteString("is ready")
		if !x.Since.IsZero() {
			fmt.Fprintf(&b, " since %s", x.clock(x.Since))
		}
		x.inLine(&b)
		x.lastError(&b)
	case store.Leased:
		b.WriteString("is leased")
		if x.Holder != "" {
			fmt.Fprintf(&b, " by %q", x.Holder)
		}
		if !x.Since.IsZero() {
			fmt.Fprintf(&b, " since %s", x.clock(x.Since))
		}
		if !x.Until.IsZero() {
			fmt.Fprintf(&b, " until %s", x.clock(x.Until))
		}
		fmt.Fprintf(&b, ", attempt %d%s", x.Attempt, x.ofMax())
		x.running(&b)
		x.lastError(&b)
	case store.Retrying:
		fmt.Fprintf(&b, "is retrying at %s after attempt %d%s", x.clock(x.Until), x.Attempt, x.ofMax())
		if x.Err != "" {
			fmt.Fprintf(&b, " (error: %q)", x.Err)
		}
	case store.Held:
		b.WriteString("is held")
		if !x.Since.IsZero() {
			fmt.Fprintf(&b, " since %s", x.clock(x.Since))
		}
		b.WriteString(" until released")
		if x.Err != "" {
			fmt.Fprintf(&b, " (error: %q)", x.Err)
		}
	case store.Deferred:
		if x.deferredForToken() {
			fmt.Fprintf(&b, "is waiting for its key's token until %s", x.clock(x.Until))
		} else {
			fmt.Fprintf(&b, "is deferred until %s", x.clock(x.Until))
		}
		x.lastError(&b)
	case store.Scheduled:
		fmt.Fprintf(&b, "is scheduled: its first value is due at %s", x.clock(x.Until))
	default:
		fmt.Fprintf(&b, "is in state %v", x.State)
	}
	return b.String()
}

// inLine says where a ready key stands: the keys ahead of it, and, when
// other tenants come first, that those are its tenant's keys and how many
// tenants take their turn before its tenant's.
func (x Explanation) inLine(b *strings.Builder) {
	tenants := x.TenantsAhead > 0
	switch {
	case x.Ahead == 0 && tenants:
		b.WriteString(", first of its tenant's keys")
	case x.Ahead == 0:
		b.WriteString(", next in line")
		return
	case x.Ahead >= store.MaxAhead:
		fmt.Fprintf(b, " with at least %d keys ahead of it", x.Ahead)
	case x.Ahead == 1:
		b.WriteString(" with 1 key ahead of it")
	default:
		fmt.Fprintf(b, " with %d keys ahead of it", x.Ahead)
	}
	if !tenants {
		return
	}
	if x.Ahead > 0 {
		b.WriteString(" in its tenant")
	}
	switch {
	case x.TenantsAhead >= store.MaxAhead:
		fmt.Fprintf(b, ", its tenant's turn after at least %d others", x.TenantsAhead)
	case x.TenantsAhead == 1:
		b.WriteString(", its tenant's turn after 1 other")
	default:
		fmt.Fprintf(b, ", its tenant's turn after %d others", x.TenantsAhead)
	}
}

// running says how many batches of a key that may run several at once
// are out: its first lease's attempt is what the sentence gave before.
func (x Explanation) running(b *strings.Builder) {
	switch {
	case x.Leases > 1 && x.PerKey > 1:
		fmt.Fprintf(b, " (%d of %d batches running)", x.Leases, x.PerKey)
	case x.Leases > 1:
		fmt.Fprintf(b, " (%d batches running)", x.Leases)
	case x.PerKey > 1:
		fmt.Fprintf(b, " (1 of %d batches running)", x.PerKey)
	}
}

// ofMax returns " of m" for the Runner's attempts, "" when unknown.
func (x Explanation) ofMax() string {
	switch {
	case x.MaxAttempts == Unlimited:
		return " of unlimited"
	case x.MaxAttempts > 0:
		return fmt.Sprintf(" of %d", x.MaxAttempts)
	}
	return ""
}

// lastError adds the error of the batch's last failure, in a state that
// does not say it failed.
func (x Explanation) lastError(b *strings.Builder) {
	if x.Err != "" {
		fmt.Fprintf(b, " (last error: %q)", x.Err)
	}
}

// reasons returns the clauses of what else holds the key back, in the
// order String documents.
func (x Explanation) reasons() []string {
	var out []string
	if x.KeyPaused {
		out = append(out, "the key is paused by an operator")
	}
	if x.QueuePaused {
		out = append(out, "the queue is paused by an operator")
	}
	type timed struct {
		at   time.Time
		text string
	}
	var ts []timed
	if !x.WindowClosedUntil.IsZero() {
		ts = append(ts, timed{x.WindowClosedUntil, "the window is closed until " + x.clock(x.WindowClosedUntil)})
	}
	if !x.LimiterPausedUntil.IsZero() {
		ts = append(ts, timed{x.LimiterPausedUntil, "the limiter is paused until " + x.clock(x.LimiterPausedUntil) + " (Retry-After)"})
	}
	if !x.LimiterNextToken.IsZero() {
		ts = append(ts, timed{x.LimiterNextToken, "the limiter gives its next token at " + x.clock(x.LimiterNextToken)})
	}
	if !x.KeyWindowClosedUntil.IsZero() {
		ts = append(ts, timed{x.KeyWindowClosedUntil, "it is outside its window until " + x.clock(x.KeyWindowClosedUntil)})
	}
	if !x.KeyTokenAt.IsZero() && !x.deferredForToken() {
		ts = append(ts, timed{x.KeyTokenAt, "it is waiting for its key's token until " + x.clock(x.KeyTokenAt)})
	}
	slices.SortStableFunc(ts, func(a, b timed) int { return b.at.Compare(a.at) })
	for _, t := range ts {
		out = append(out, t.text)
	}
	if x.RateLimited && x.LimiterPausedUntil.IsZero() && x.LimiterNextToken.IsZero() {
		out = append(out, "it is rate-limited")
	}
	return out
}

// clock formats t in UTC: its time of day when it is within a day of At,
// with its date otherwise.
func (x Explanation) clock(t time.Time) string {
	if d := t.Sub(x.At); !x.At.IsZero() && d < 24*time.Hour && d > -24*time.Hour {
		return t.UTC().Format("15:04:05.999Z07:00")
	}
	return t.UTC().Format("2006-01-02T15:04:05.999Z07:00")
}

// The JSON of Explanation: see store/json.go for the pattern. Its twin
// type keeps the fields and tags but not the methods.
type (
	explanationFields Explanation

	explanationJSON struct {
		*explanationFields
		At                   jsonfield.Time `json:"at,omitzero"`
		Since                jsonfield.Time `json:"since,omitzero"`
		Until                jsonfield.Time `json:"until,omitzero"`
		WindowClosedUntil    jsonfield.Time `json:"window_closed_until,omitzero"`
		LimiterPausedUntil   jsonfield.Time `json:"limiter_paused_until,omitzero"`
		LimiterNextToken     jsonfield.Time `json:"limiter_next_token,omitzero"`
		KeyWindowClosedUntil jsonfield.Time `json:"key_window_closed_until,omitzero"`
		KeyTokenAt           jsonfield.Time `json:"key_token_at,omitzero"`
	}
)

func (x *Explanation) json() explanationJSON {
	return explanationJSON{(*explanationFields)(x), jsonfield.Time(x.At), jsonfield.Time(x.Since), jsonfield.Time(x.Until),
		jsonfield.Time(x.WindowClosedUntil), jsonfield.Time(x.LimiterPausedUntil), jsonfield.Time(x.LimiterNextToken),
		jsonfield.Time(x.KeyWindowClosedUntil), jsonfield.Time(x.KeyTokenAt)}
}

// MarshalJSON writes x as the Explanation doc shows.
func (x Explanation) MarshalJSON() ([]byte, error) { return json.Marshal(x.json()) }

// UnmarshalJSON reads what MarshalJSON writes.
func (x *Explanation) UnmarshalJSON(b []byte) error {
	j := x.json()
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	x.At, x.Since, x.Until = time.Time(j.At), time.Time(j.Since), time.Time(j.Until)
	x.WindowClosedUntil, x.LimiterPausedUntil, x.LimiterNextToken = time.Time(j.WindowClosedUntil), time.Time(j.LimiterPausedUntil), time.Time(j.LimiterNextToken)
	x.KeyWindowClosedUntil, x.KeyTokenAt = time.Time(j.KeyWindowClosedUntil), time.Time(j.KeyTokenAt)
	return nil
}

// explained returns the engine's part of an Explanation: what a key is
// doing, whether it or its queue is paused.
func explained(info store.KeyInfo, found, queuePaused bool) Explanation {
	x := Explanation{StoredKey: info.Key, QueuePaused: queuePaused}
	if !found {
		return x
	}
	x.State, x.Values = info.State, info.Values
	x.Since, x.Until, x.MaxWait = info.Since, info.Until, info.MaxWait
	x.Ahead, x.TenantsAhead = info.Ahead, info.TenantsAhead
	x.Holder, x.Attempt, x.Err = info.Holder, info.Attempt, info.Err
	x.Leases = info.Leases
	x.KeyPaused = info.Paused
	if info.ForToken {
		x.KeyTokenAt = info.Until
	}
	return x
}

// deferredForToken reports whether the key's state is the wait for its
// KeyRate token, which the engine deferred it for (KeyInfo.ForToken).
func (x Explanation) deferredForToken() bool {
	return x.State == store.Deferred && x.KeyTokenAt.Equal(x.Until)
}
