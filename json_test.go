package pacer_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// fullStats sets every field of Stats, each to a different value.
var fullStats = pacer.Stats{
	Values: 1, Queued: 2, InFlight: 3, Pending: 4, Held: 5, Retrying: 6, Blocked: 7, Dead: 8,
	Debounce: 1500 * time.Millisecond,
	Received: 9, Handled: 10, Batches: 11, Reruns: 12, Retries: 13, Dropped: 14, Refused: 15,
	RateLimitWait: 5202027777,
}

func TestStatsJSON(t *testing.T) {
	t.Parallel()
	requireAllSet(t, fullStats)
	for _, c := range []struct {
		name  string
		stats pacer.Stats
		json  string
	}{
		{"zero", pacer.Stats{},
			`{"values":0,"queued":0,"in_flight":0,"pending":0,"held":0,"retrying":0,"blocked":0,"dead":0,` +
				`"received":0,"handled":0,"batches":0,"reruns":0,"retries":0,"dropped":0,"refused":0,` +
				`"debounce_seconds":0,"rate_limit_wait_seconds":0}`},
		{"full", fullStats,
			`{"values":1,"queued":2,"in_flight":3,"pending":4,"held":5,"retrying":6,"blocked":7,"dead":8,` +
				`"received":9,"handled":10,"batches":11,"reruns":12,"retries":13,"dropped":14,"refused":15,` +
				`"debounce_seconds":1.5,"rate_limit_wait_seconds":5.202027777}`},
		{"whole seconds and a nanosecond", pacer.Stats{Debounce: time.Minute, RateLimitWait: time.Nanosecond},
			`{"values":0,"queued":0,"in_flight":0,"pending":0,"held":0,"retrying":0,"blocked":0,"dead":0,` +
				`"received":0,"handled":0,"batches":0,"reruns":0,"retries":0,"dropped":0,"refused":0,` +
				`"debounce_seconds":60,"rate_limit_wait_seconds":0.000000001}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(c.stats)
			require.NoError(t, err)
			require.Equal(t, c.json, string(got))

			var back pacer.Stats
			require.NoError(t, json.Unmarshal(got, &back))
			require.Equal(t, c.stats, back)

			// A pointer, and a Stats inside another value, read the same.
			got, err = json.Marshal(map[string]any{"runner": &c.stats})
			require.NoError(t, err)
			var wrapped struct{ Runner pacer.Stats }
			require.NoError(t, json.Unmarshal(got, &wrapped))
			require.Equal(t, c.stats, wrapped.Runner)
		})
	}
}

// Unmarshal takes what a script might write: any number of seconds, and
// fields left out, which keep their values.
func TestStatsUnmarshal(t *testing.T) {
	t.Parallel()
	s := pacer.Stats{Values: 7, Debounce: time.Second, RateLimitWait: time.Hour}
	require.NoError(t, json.Unmarshal([]byte(`{"queued":2,"rate_limit_wait_seconds":2.5e-3}`), &s))
	require.Equal(t, pacer.Stats{Values: 7, Queued: 2, Debounce: time.Second, RateLimitWait: 2500 * time.Microsecond}, s)

	for _, bad := range []string{`{"debounce_seconds":"5s"}`, `{"rate_limit_wait_seconds":1e300}`, `{"values":"3"}`, `[]`} {
		require.Error(t, json.Unmarshal([]byte(bad), &s), bad)
	}
}

type payload struct {
	Task string `json:"task"`
}

func TestDeadLetterJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 13, 0, 5, 250_000_000, time.FixedZone("CET", 3600))
	raw := store.DeadLetter{ID: 7, Key: "alice", Values: [][]byte{[]byte(`{"task":"a1"}`), []byte("x")}, Err: "boom", Attempt: 3, At: at}
	full := pacer.DeadLetter[string, payload]{
		ID: 7, Key: "alice", Values: []payload{{"a1"}}, Err: "boom", Attempt: 3, At: at,
		DecodeErr: errors.Join(pacer.ErrUndecodable, errors.New("1 of 2 values")), Raw: raw,
	}
	requireAllSet(t, full)
	for _, c := range []struct {
		name string
		dead pacer.DeadLetter[string, payload]
		json string
		back pacer.DeadLetter[string, payload] // when not the same as dead
	}{
		{name: "zero", json: `{"id":0,"key":"","values":null,"attempt":0}`},
		{
			name: "decoded: no raw",
			dead: pacer.DeadLetter[string, payload]{ID: 7, Key: "alice", Values: []payload{{"a1"}}, Err: "boom", Attempt: 3, At: at, Raw: raw},
			json: `{"id":7,"key":"alice","values":[{"task":"a1"}],"error":"boom","attempt":3,"at":"2025-03-01T12:00:05.25Z"}`,
			back: pacer.DeadLetter[string, payload]{ID: 7, Key: "alice", Values: []payload{{"a1"}}, Err: "boom", Attempt: 3, At: at.UTC()},
		},
		{
			name: "undecodable: raw in base64",
			dead: full,
			json: `{"id":7,"key":"alice","values":[{"task":"a1"}],"error":"boom","attempt":3,"at":"2025-03-01T12:00:05.25Z",` +
				`"decode_error":"pacer: stored value does not decode\n1 of 2 values",` +
				`"raw":{"id":7,"key":"alice","values":["eyJ0YXNrIjoiYTEifQ==","eA=="],"error":"boom","attempt":3,"at":"2025-03-01T12:00:05.25Z"}}`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(c.dead)
			require.NoError(t, err)
			require.Equal(t, c.json, string(got))

			var back pacer.DeadLetter[string, payload]
			require.NoError(t, json.Unmarshal(got, &back))
			want := c.back
			if want.ID == 0 {
				want = c.dead
			}
			if want.DecodeErr != nil {
				require.ErrorIs(t, back.DecodeErr, pacer.ErrUndecodable)
				require.EqualError(t, back.DecodeErr, want.DecodeErr.Error())
				back.DecodeErr, want.DecodeErr = nil, nil
			}
			require.True(t, want.At.Equal(back.At), "at %v, want %v", back.At, want.At)
			require.True(t, want.Raw.At.Equal(back.Raw.At), "raw at %v, want %v", back.Raw.At, want.Raw.At)
			back.At, want.At, back.Raw.At, want.Raw.At = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			require.Equal(t, want, back)
		})
	}

	// An integer key is a JSON number.
	got, err := json.Marshal(pacer.DeadLetter[int, string]{ID: 1, Key: 42, Values: []string{"hi"}, Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"key":42,"values":["hi"],"attempt":1}`, string(got))
}

// A dead letter the Runner could not decode shows why and its bytes.
func TestDeadLetterJSONFromRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		mem := store.NewMemory(store.MemoryConfig{})
		require.NoError(t, mem.Add(ctx, "q", "k", [][]byte{[]byte("1"), []byte(`"one"`)}, store.AddParams{}))
		r := newRunner(t, pacer.Config[string, int]{Store: mem, Name: "q"}, newRecorder(nil))
		start(t, r)()

		dead, err := r.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		got, err := json.Marshal(dead[0])
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(got, &m))
		require.Equal(t, "k", m["key"])
		require.Equal(t, []any{1.0}, m["values"])
		require.Contains(t, m["decode_error"], "1 of 2 values")
		require.Equal(t, []any{"MQ==", "Im9uZSI="}, m["raw"].(map[string]any)["values"])
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`, m["at"])
	})
}

// snakeCase is the form of every JSON name.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Every type an operator reads as JSON names each exported field in
// snake_case, with _seconds on a duration and omitzero on a time, so that
// a field added later cannot slip out of the convention.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		pacer.Stats{}, pacer.DeadLetter[string, int]{}, pacer.Explanation{}, ratelimit.Stats{},
		store.Stats{}, store.QueueInfo{}, store.KeyPage{}, store.KeyInfo{}, store.StoredValue{}, store.DeadLetter{},
	} {
		typ := reflect.TypeOf(v)
		needsMethods := false
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if !snakeCase.MatchString(name) {
				t.Errorf("%v.%s: JSON name %q is not snake_case", typ, f.Name, tag)
			}
			switch f.Type {
			case reflect.TypeFor[time.Duration]():
				needsMethods = true
				if !strings.HasSuffix(name, "_seconds") {
					t.Errorf("%v.%s: a duration's name ends in _seconds, not %q", typ, f.Name, name)
				}
			case reflect.TypeFor[time.Time]():
				needsMethods = true
				if opts != "omitzero" {
					t.Errorf("%v.%s: a time is left out when zero (omitzero), tag %q", typ, f.Name, tag)
				}
			}
		}
		_, marshals := v.(json.Marshaler)
		_, unmarshals := reflect.New(typ).Interface().(json.Unmarshaler)
		if needsMethods && !(marshals && unmarshals) {
			t.Errorf("%v has a time or a duration but not both MarshalJSON and UnmarshalJSON", typ)
		}
	}
}

// requireAllSet fails when a field of v is zero, so that a table's full
// value covers every field, those added later too.
func requireAllSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		require.False(t, rv.Field(i).IsZero(), "%v.%s is zero", rv.Type(), rv.Type().Field(i).Name)
	}
}
