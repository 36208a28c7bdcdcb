package redisfn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The version comes from HELLO's reply in either protocol; 7.0 and later
// pass, as does a version that cannot be read.
func TestVersions(t *testing.T) {
	v, err := helloVersion(map[any]any{"server": "redis", "version": "7.0.15", "proto": int64(3)})
	require.NoError(t, err)
	require.Equal(t, "7.0.15", v)
	v, err = helloVersion([]any{"server", "redis", "version", "6.2.14", "proto", int64(2)})
	require.NoError(t, err)
	require.Equal(t, "6.2.14", v)
	_, err = helloVersion([]any{"server", "redis"})
	require.Error(t, err)

	for v, ok := range map[string]bool{
		"7.0.0": true, "7.0.15": true, "7.2.4": true, "8.0.1": true, "10.0.0": true, "unstable": true,
		"6.2.14": false, "6.0.9": false, "5.0.14": false,
	} {
		require.Equal(t, ok, atLeast7(v), v)
	}
}
