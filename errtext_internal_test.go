package pacer

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A handler's error goes whole to the engine up to maxErrText bytes, and
// cut at a rune's start, with an ellipsis, past it.
func TestErrText(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"", ""},
		{"boom", "boom"},
		{strings.Repeat("a", 1024), strings.Repeat("a", 1024)},
		{strings.Repeat("a", 1025), strings.Repeat("a", 1021) + "…"},
		{strings.Repeat("é", 600), strings.Repeat("é", 510) + "…"},
		{"a" + strings.Repeat("€", 400), "a" + strings.Repeat("€", 340) + "…"},
	} {
		got := errText(errors.New(c.err))
		require.Equal(t, c.want, got, "errText of %d bytes", len(c.err))
		require.LessOrEqual(t, len(got), maxErrText)
	}
}
