package carrier_test

import (
	"bytes"
	"encoding/gob"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/carrier"
)

// A W3C trace context as the otel module carries it: a version byte, the
// trace ID, the span ID and the flags.
var traceContext = append([]byte{0}, bytes.Repeat([]byte{7}, 25)...)

func TestFrameRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name             string
		carried, payload []byte
		overhead         int
	}{
		{"trace context", traceContext, []byte(`{"id":1}`), 2 + 26},
		{"most carried", bytes.Repeat([]byte{1}, carrier.MaxCarried), []byte(`"x"`), carrier.Overhead},
		{"one byte", []byte{0xFF}, []byte(`1`), 3},
		{"empty payload", traceContext, nil, 28},
		{"payload that looks framed", traceContext, []byte{0xFF, 0, 1}, 28},
		{"nothing carried", nil, []byte(`{"id":1}`), 0},
		{"nothing carried, empty payload", nil, []byte{}, 0},
		{"nothing carried, payload beginning with the marker", nil, []byte{0xFF, 3, 1, 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := carrier.Frame(tc.carried, tc.payload)
			require.Len(t, stored, len(tc.payload)+tc.overhead)
			carried, payload, framed := carrier.Split(stored)
			require.Equal(t, tc.overhead > 0, framed)
			require.Equal(t, string(tc.carried), string(carried))
			require.Equal(t, string(tc.payload), string(payload))
			require.Equal(t, string(tc.payload), string(carrier.Strip(stored)))
			if len(carried) > 0 {
				require.Equal(t, len(carried), cap(carried), "appending to carried must not overwrite the payload")
			}
		})
	}
}

// The Codec's bytes of a value that carries nothing are stored as they are.
func TestFrameAddsNothingWhenNothingCarried(t *testing.T) {
	payload := []byte(`{"id":1}`)
	stored := carrier.Frame(nil, payload)
	require.Same(t, &payload[0], &stored[0])
}

func TestFrameRefusesTooMuch(t *testing.T) {
	require.True(t, carrier.Fits(make([]byte, carrier.MaxCarried)))
	require.False(t, carrier.Fits(make([]byte, carrier.MaxCarried+1)))
	require.Panics(t, func() { carrier.Frame(make([]byte, carrier.MaxCarried+1), nil) })
	require.LessOrEqual(t, carrier.Overhead, 60)
}

// Bytes that are not a well-formed frame are a payload, whole.
func TestSplitUnframed(t *testing.T) {
	for _, stored := range [][]byte{
		nil,
		{},
		[]byte(`{"a":1}`),
		[]byte(`"ÿ"`), // the marker's rune is two other bytes in UTF-8
		{0xFF},        // no length
		{0xFF, 3, 1},  // shorter than its length says
		{0xFF, carrier.MaxCarried + 1},
		append([]byte{0xFF, carrier.MaxCarried + 1}, make([]byte, 100)...),
		{0xFE, 0, 1}, // another version's marker
		{0xFF, 0},    // nothing carried, nothing escaped
		{0xFF, 0, 1}, // nothing carried, and a payload that needs no escape
	} {
		carried, payload, framed := carrier.Split(stored)
		require.False(t, framed, "%x", stored)
		require.Nil(t, carried)
		require.Equal(t, stored, payload)
		require.Equal(t, stored, carrier.Strip(stored))
	}
}

// No UTF-8 text begins with the marker, so a text codec's bytes never
// read as a frame.
func TestTextIsNeverFramed(t *testing.T) {
	for _, s := range []string{"", "a", `{"k":"ÿ"}`, "\u00ff\u00ff", "\U0010FFFF", strings.Repeat("é", 40)} {
		_, _, framed := carrier.Split([]byte(s))
		require.False(t, framed, "%q", s)
	}
}

// A gob message of 128 to 255 bytes begins with 0xFF, then its length,
// 0x80 or more: more than MaxCarried, so it is not framed.
func TestGobIsNotFramed(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(strings.Repeat("x", 150)))
	b := buf.Bytes()
	require.Equal(t, byte(0xFF), b[0], "the gob message this test needs")
	_, _, framed := carrier.Split(b)
	require.False(t, framed)
}
