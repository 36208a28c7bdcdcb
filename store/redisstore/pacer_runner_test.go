package redisstore_test

import (
	"testing"

	"github.com/pacerkit/pacer/internal/runnertest"
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
