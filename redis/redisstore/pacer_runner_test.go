package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/runnertest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// Two pacer Runners, the instances of one service, on one Redis: the
// Runner's guarantees hold across them (runnertest.RunnersShare).
func TestRunnersShareRedis(t *testing.T) {
	s, _, _ := newStore(t)
	runnertest.RunnersShare(t, s, s)
}

// Runners on Redis retry a failing batch, drop one that failed for good or
// used up its attempts, and keep what they drop as dead letters, which
// another instance lists, redrives and purges
// (runnertest.RetriesAndDeadLetters).
func TestRunnerRetriesAndDeadLettersOnRedis(t *testing.T) {
	s, _, _ := newStore(t)
	runnertest.RetriesAndDeadLetters(t, s, s)
}

// Runners with MaxValues on Redis, each through a client of its own, share
// one bound: their Adds together stop at it with ErrFull
// (runnertest.MaxValues).
func TestRunnerMaxValuesOnRedis(t *testing.T) {
	s, _, p := newStore(t)
	other, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: p})
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	runnertest.MaxValues(t, s, other)
}

// boundChild is set in the environment of the processes that
// TestRunnerMaxValuesAcrossProcesses starts.
const boundChild = "PACER_REDIS_BOUND_CHILD"

// Three processes of Runners with MaxValues add to one queue at once: the
// values they store together are the bound exactly
// (runnertest.MaxValuesAcrossProcesses).
func TestRunnerMaxValuesAcrossProcesses(t *testing.T) {
	s, _, p := newStore(t)
	runnertest.MaxValuesAcrossProcesses(t, s, p, "bound", 50, 3, "TestBoundChild", boundChild)
}

// TestBoundChild is one process of TestRunnerMaxValuesAcrossProcesses.
func TestBoundChild(t *testing.T) {
	runnertest.AddUpTo(t, boundChild, func(prefix string) store.Store {
		s, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
