package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// The scenarios of Runners in three processes (storetest.RunProcesses):
// with MaxValues, adding to one queue at once, the values they store
// together are the bound exactly; handling a queue that another process
// pauses (OperatorPause), they start no batch until it is resumed, and
// lose nothing.
func TestRunnerProcesses(t *testing.T) {
	s, _, p := newStore(t)
	storetest.RunProcesses(t, storetest.Processes{Store: s, Where: p, Child: "TestStoretestChild"})
}

// TestStoretestChild is one process of TestRunnerProcesses,
// on the prefix it names.
func TestStoretestChild(t *testing.T) {
	storetest.Child(t, func(t *testing.T, prefix string) store.Store {
		s, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
