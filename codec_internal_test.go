package pacer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/shared"
)

type namedKey string

// The codec of string keys decodes a key stored as a string as Decode
// does its bytes, without a copy for a key of type string.
func TestStringKeyDecodeString(t *testing.T) {
	c, ok := keyCodec[string]().(shared.StringDecoder[string])
	require.True(t, ok)
	k, err := c.DecodeString("a b")
	require.NoError(t, err)
	require.Equal(t, "a b", k)
	stored := string([]byte("stored"))
	require.Zero(t, testing.AllocsPerRun(100, func() { k, _ = c.DecodeString(stored) }))

	n, ok := keyCodec[namedKey]().(shared.StringDecoder[namedKey])
	require.True(t, ok)
	nk, err := n.DecodeString("alice")
	require.NoError(t, err)
	require.Equal(t, namedKey("alice"), nk)
	fromBytes, err := keyCodec[namedKey]().Decode([]byte("alice"))
	require.NoError(t, err)
	require.Equal(t, nk, fromBytes)
}
