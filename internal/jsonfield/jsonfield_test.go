package jsonfield

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSecondsJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		json string
	}{
		{0, "0"},
		{time.Nanosecond, "0.000000001"},
		{5 * time.Second, "5"},
		{1500 * time.Millisecond, "1.5"},
		{5202027777, "5.202027777"},
		{90 * time.Minute, "5400"},
		{-1500 * time.Millisecond, "-1.5"},
		{-time.Nanosecond, "-0.000000001"},
		{math.MaxInt64, "9223372036.854775807"},
		{math.MinInt64, "-9223372036.854775808"},
	} {
		got, err := json.Marshal(Seconds(c.d))
		require.NoError(t, err)
		require.Equal(t, c.json, string(got), "%v", c.d)

		var back Seconds
		require.NoError(t, json.Unmarshal(got, &back))
		require.Equal(t, c.d, time.Duration(back), "%s back", c.json)

		// A float64 reads the same number to within a nanosecond while
		// it has the digits (below 2^53 ns).
		if c.d > -1<<53 && c.d < 1<<53 {
			var f float64
			require.NoError(t, json.Unmarshal(got, &f))
			require.InDelta(t, float64(c.d), f*1e9, 1, "%s as float64", c.json)
		}
	}
}

func TestSecondsUnmarshalAnyNumber(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		json string
		d    time.Duration
	}{
		{"1e-3", time.Millisecond},
		{"2.5E2", 250 * time.Second},
		{"-0", 0},
		{"0.1234567894", 123456789 * time.Nanosecond}, // a tenth of a nanosecond is dropped
		{"1e-10", 0},
	} {
		var s Seconds
		require.NoError(t, json.Unmarshal([]byte(c.json), &s), c.json)
		require.Equal(t, c.d, time.Duration(s), c.json)
	}

	keep := Seconds(time.Second)
	require.NoError(t, json.Unmarshal([]byte("null"), &keep))
	require.Equal(t, Seconds(time.Second), keep, "null leaves the value")

	for _, bad := range []string{`"5s"`, `true`, `{}`, `1e300`, `-1e300`, `9223372037`} {
		var s Seconds
		require.Error(t, json.Unmarshal([]byte(bad), &s), bad)
	}
}

func TestTimeJSON(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	for _, c := range []struct {
		t    time.Time
		json string
	}{
		{time.Date(2025, 3, 1, 12, 0, 5, 0, time.UTC), `"2025-03-01T12:00:05Z"`},
		{time.Date(2025, 3, 1, 12, 0, 5, 120_000_000, time.UTC), `"2025-03-01T12:00:05.12Z"`},
		{time.Date(2025, 3, 1, 12, 0, 5, 1, time.UTC), `"2025-03-01T12:00:05.000000001Z"`},
		{time.Date(2025, 3, 1, 13, 0, 5, 250_000_000, paris), `"2025-03-01T12:00:05.25Z"`},
	} {
		got, err := json.Marshal(Time(c.t))
		require.NoError(t, err)
		require.Equal(t, c.json, string(got))

		var back Time
		require.NoError(t, json.Unmarshal(got, &back))
		require.True(t, c.t.Equal(time.Time(back)), "%s back: %v", c.json, time.Time(back))
		require.Equal(t, time.UTC, time.Time(back).Location())
	}

	require.True(t, Time{}.IsZero())
	require.False(t, Time(time.Unix(0, 0)).IsZero())
	out, err := json.Marshal(struct {
		A Time `json:"a,omitzero"`
		B Time `json:"b,omitzero"`
	}{B: Time(time.Unix(0, 0))})
	require.NoError(t, err)
	require.JSONEq(t, `{"b":"1970-01-01T00:00:00Z"}`, string(out), "omitzero leaves the zero time out")

	keep := Time(time.Unix(7, 0))
	require.NoError(t, json.Unmarshal([]byte("null"), &keep))
	require.True(t, time.Unix(7, 0).Equal(time.Time(keep)), "null leaves the value")
	require.Error(t, json.Unmarshal([]byte(`"yesterday"`), &keep))
}
