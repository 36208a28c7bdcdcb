package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

func TestExplain(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		out := ok(t, e.with("explain", mailQueue, heldKey)...)
		assert.Contains(t, out, `key "held" is held`)
		assert.Contains(t, out, "mailbox full")
		assert.NotContains(t, out, "paused")

		ok(t, e.with("pause", mailQueue, valuesKey)...)
		assert.Contains(t, ok(t, e.with("explain", mailQueue, valuesKey)...), "the key is paused by an operator")
		ok(t, e.with("pause", mailQueue)...)
		out = ok(t, e.with("explain", mailQueue, valuesKey)...)
		assert.Contains(t, out, "the key is paused by an operator")
		assert.Contains(t, out, "the queue is paused by an operator")

		var x pacer.Explanation
		require.NoError(t, json.Unmarshal([]byte(ok(t, e.with("explain", mailQueue, valuesKey, "-json")...)), &x))
		assert.Equal(t, valuesKey, x.Key)
		assert.Equal(t, store.Ready, x.State)
		assert.Equal(t, 3, x.Values)
		assert.True(t, x.KeyPaused)
		assert.True(t, x.QueuePaused)

		// A key without values is explained too: it holds none.
		require.NoError(t, json.Unmarshal([]byte(ok(t, e.with("explain", mailQueue, "nobody", "-json")...)), &x))
		assert.Equal(t, store.KeyState(0), x.State)
		assert.Equal(t, 0, x.Values)
	})
}
