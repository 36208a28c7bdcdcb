package store_test

import (
	"encoding/json"
	"flag"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// paris is a zone the engines' times may come in; the JSON is in UTC.
var paris = time.FixedZone("CET", 3600)

// at is 2025-03-01T12:00:05Z plus ms milliseconds, read in Paris.
func at(ms int) time.Time {
	return time.Date(2025, 3, 1, 12, 0, 5, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond).In(paris)
}

// jsonCase is one value, its JSON, and the value its JSON reads back to.
type jsonCase struct {
	name string
	v    any // a value, not a pointer
	json string
}

// checkJSON marshals each case, compares the JSON, reads it back into a
// new value of the same type and compares that with the case's value, its
// times compared as instants.
func checkJSON(t *testing.T, cases []jsonCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(c.v)
			require.NoError(t, err)
			require.Equal(t, c.json, string(got))

			back := newLike(c.v)
			require.NoError(t, json.Unmarshal(got, back))
			// Times come back in UTC: compare them as JSON once more.
			again, err := json.Marshal(back)
			require.NoError(t, err)
			require.Equal(t, c.json, string(again))
			require.Equal(t, utc(c.v), deref(back))
		})
	}
}

// newLike returns a pointer to a new zero value of v's type.
func newLike(v any) any { return reflect.New(reflect.TypeOf(v)).Interface() }

// deref returns the value p points to.
func deref(p any) any { return reflect.ValueOf(p).Elem().Interface() }

// utc returns a copy of v with its times, nested ones too, in UTC, as
// they read back from JSON.
func utc(v any) any {
	rv := reflect.New(reflect.TypeOf(v)).Elem()
	rv.Set(reflect.ValueOf(v))
	toUTC(rv)
	return rv.Interface()
}

func toUTC(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(v.Interface().(time.Time).UTC()))
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			toUTC(v.Field(i))
		}
	case v.Kind() == reflect.Slice && !v.IsNil():
		cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(cp, v) // leave the case's own slice as it is
		v.Set(cp)
		for i := range v.Len() {
			toUTC(v.Index(i))
		}
	}
}

var (
	fullStats = store.Stats{Values: 1, Keys: 2, Ready: 3, Pending: 4, Leased: 5, Retrying: 6, Behind: 7, Held: 8, HeldValues: 9, Dead: 10, PausedKeys: 11, Paused: true}
	statsJSON = `{"values":1,"keys":2,"ready":3,"pending":4,"leased":5,"retrying":6,"behind":7,"held":8,"held_values":9,"dead":10,"paused_keys":11,"paused":true}`
)

func TestStatsJSON(t *testing.T) {
	t.Parallel()
	checkJSON(t, []jsonCase{
		{"zero", store.Stats{}, `{"values":0,"keys":0,"ready":0,"pending":0,"leased":0,"retrying":0,"behind":0,"held":0,"held_values":0,"dead":0,"paused_keys":0}`},
		{"full", fullStats, statsJSON},
	})
}

func TestQueueInfoJSON(t *testing.T) {
	t.Parallel()
	checkJSON(t, []jsonCase{
		{"nothing ready", store.QueueInfo{Name: "mail", Stats: store.Stats{Dead: 2}},
			`{"name":"mail","stats":{"values":0,"keys":0,"ready":0,"pending":0,"leased":0,"retrying":0,"behind":0,"held":0,"held_values":0,"dead":2,"paused_keys":0}}`},
		{"full", store.QueueInfo{Name: "mail", Stats: fullStats, Oldest: at(250)},
			`{"name":"mail","stats":` + statsJSON + `,"oldest":"2025-03-01T12:00:05.25Z"}`},
	})
}

func TestKeyInfoJSON(t *testing.T) {
	t.Parallel()
	checkJSON(t, []jsonCase{
		{"zero", store.KeyInfo{}, `{"key":"","state":"","attempt":0,"values":0}`},
		{"debouncing to its max wait", store.KeyInfo{Key: "alice", State: store.Debouncing, Until: at(3000), MaxWait: true, Values: 4, Oldest: at(-12000)},
			`{"key":"alice","state":"debouncing","max_wait":true,"attempt":0,"values":4,"until":"2025-03-01T12:00:08Z","oldest":"2025-03-01T11:59:53Z"}`},
		{"ready", store.KeyInfo{Key: "bob", State: store.Ready, Since: at(1), Values: 1, Oldest: at(0)},
			`{"key":"bob","state":"ready","attempt":0,"values":1,"since":"2025-03-01T12:00:05.001Z","oldest":"2025-03-01T12:00:05Z"}`},
		{"ready behind keys of its tenant and other tenants", store.KeyInfo{Key: "bob", State: store.Ready, Since: at(1), Values: 1, Oldest: at(0), Ahead: 3, TenantsAhead: 2},
			`{"key":"bob","state":"ready","attempt":0,"values":1,"ahead":3,"tenants_ahead":2,"since":"2025-03-01T12:00:05.001Z","oldest":"2025-03-01T12:00:05Z"}`},
		{"leased", store.KeyInfo{Key: "carol", State: store.Leased, Since: at(0), Until: at(30000), Attempt: 2, Fence: 41, Holder: "web-1", Values: 3, Oldest: at(-500)},
			`{"key":"carol","state":"leased","attempt":2,"fence":41,"holder":"web-1","values":3,"since":"2025-03-01T12:00:05Z","until":"2025-03-01T12:00:35Z","oldest":"2025-03-01T12:00:04.5Z"}`},
		{"retrying", store.KeyInfo{Key: "dave", State: store.Retrying, Until: at(60000), Attempt: 3, Fence: 9, Err: "503 Service Unavailable", Values: 2, Oldest: at(0)},
			`{"key":"dave","state":"retrying","attempt":3,"fence":9,"error":"503 Service Unavailable","values":2,"until":"2025-03-01T12:01:05Z","oldest":"2025-03-01T12:00:05Z"}`},
		{"held", store.KeyInfo{Key: "erin", State: store.Held, Since: at(0), Attempt: 5, Fence: 12, Err: "gone", Values: 1, Oldest: at(0)},
			`{"key":"erin","state":"held","attempt":5,"fence":12,"error":"gone","values":1,"since":"2025-03-01T12:00:05Z","oldest":"2025-03-01T12:00:05Z"}`},
		{"deferred", store.KeyInfo{Key: "frank", State: store.Deferred, Until: at(999_999), Attempt: 1, Fence: 3, Values: 1, Oldest: at(0)},
			`{"key":"frank","state":"deferred","attempt":1,"fence":3,"values":1,"until":"2025-03-01T12:16:44.999Z","oldest":"2025-03-01T12:00:05Z"}`},
		{"scheduled", store.KeyInfo{Key: "grace", State: store.Scheduled, Until: at(3_600_000), Values: 2, Oldest: at(0)},
			`{"key":"grace","state":"scheduled","attempt":0,"values":2,"until":"2025-03-01T13:00:05Z","oldest":"2025-03-01T12:00:05Z"}`},
	})
}

func TestKeyPageJSON(t *testing.T) {
	t.Parallel()
	checkJSON(t, []jsonCase{
		{"last page", store.KeyPage{Keys: []store.KeyInfo{{Key: "bob", State: store.Ready, Since: at(0), Values: 1, Oldest: at(0)}}},
			`{"keys":[{"key":"bob","state":"ready","attempt":0,"values":1,"since":"2025-03-01T12:00:05Z","oldest":"2025-03-01T12:00:05Z"}]}`},
		{"a next page", store.KeyPage{Keys: []store.KeyInfo{{Key: "a", State: store.Held, Values: 1}}, Next: "YQ"},
			`{"keys":[{"key":"a","state":"held","attempt":0,"values":1}],"next":"YQ"}`},
	})
}

func TestStoredValueJSON(t *testing.T) {
	t.Parallel()
	checkJSON(t, []jsonCase{
		{"zero", store.StoredValue{}, `{"value":null}`},
		// Bytes are base64 even when they are JSON: the shape never
		// depends on the content.
		{"JSON bytes", store.StoredValue{Value: []byte(`{"task":"a1"}`), Added: at(120)},
			`{"value":"eyJ0YXNrIjoiYTEifQ==","added":"2025-03-01T12:00:05.12Z"}`},
		{"binary", store.StoredValue{Value: []byte{0, 0xff, 0xfe}, Added: at(0).Add(1)},
			`{"value":"AP/+","added":"2025-03-01T12:00:05.000000001Z"}`},
	})
}

func TestDeadLetterJSON(t *testing.T) {
	t.Parallel()
	checkJSON(t, []jsonCase{
		{"zero", store.DeadLetter{}, `{"id":0,"key":"","values":null,"attempt":0}`},
		{"full", store.DeadLetter{ID: 7, Key: "alice", Values: [][]byte{[]byte("hi"), {}}, Err: "400 Bad Request", Attempt: 1, At: at(0)},
			`{"id":7,"key":"alice","values":["aGk=",""],"error":"400 Bad Request","attempt":1,"at":"2025-03-01T12:00:05Z"}`},
	})
}

func TestKeyStateText(t *testing.T) {
	t.Parallel()
	for s, name := range map[store.KeyState]string{
		0: "", store.Debouncing: "debouncing", store.Ready: "ready", store.Leased: "leased",
		store.Retrying: "retrying", store.Held: "held", store.Deferred: "deferred",
		store.Scheduled: "scheduled",
	} {
		got, err := s.MarshalText()
		require.NoError(t, err)
		require.Equal(t, name, string(got))
		var back store.KeyState
		require.NoError(t, back.UnmarshalText(got))
		require.Equal(t, s, back)
	}
	_, err := store.KeyState(store.Scheduled + 1).MarshalText()
	require.ErrorContains(t, err, "KeyState(8) is not a state")
	_, err = json.Marshal(store.KeyInfo{State: 9})
	require.Error(t, err)

	var s store.KeyState
	require.ErrorContains(t, s.UnmarshalText([]byte("Held")), `"Held" is not a key state`)
	require.ErrorContains(t, json.Unmarshal([]byte(`{"state":"paused"}`), &store.KeyInfo{}), `"paused" is not a key state`)
	require.Error(t, json.Unmarshal([]byte(`{"state":4}`), &store.KeyInfo{}), "a state is a name, not a number")

	// A KeyState is a flag, as a command line filters keys by state.
	fs := flag.NewFlagSet("keys", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.TextVar(&s, "state", store.KeyState(0), "keep only the keys in this state")
	require.NoError(t, fs.Parse([]string{"-state", "held"}))
	require.Equal(t, store.Held, s)
	require.Error(t, fs.Parse([]string{"-state", "stuck"}))
}
