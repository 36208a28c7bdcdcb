// Package storetest is the conformance suite of store engines: Run holds an
// engine to every guarantee of the store package doc, the same scenarios for
// Memory and for the engines that keep their state in a server. An engine
// is done when Run passes on it, under -race.
//
// The suite runs on real time, because an engine's clock is its own (a
// server's clock cannot be mocked from a test). It keeps its durations
// short (tens of milliseconds) and asserts in two ways: lower bounds
// exactly (nothing is ready before its deadline, measured from before the
// call that set it) and upper bounds generously (within Late of it). It
// waits with the engine's own Wait and Claim, bounded by a deadline, never
// with a sleep that hopes things happened. A scenario that finds the machine
// too slow to prove anything (a pause that overran a quiet period) skips
// itself, saying so, rather than fail.
//
// A typical engine test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Harness {
//			return storetest.Harness{Store: newEngine(t), Queue: t.Name()}
//		})
//	}
package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Late is how late the suite lets a deadline be met, or a Wait wake up,
// before it fails: generous, so that a loaded machine does not fail it.
const Late = time.Second

// Harness is the engine under test, as one scenario sees it.
type Harness struct {
	// Store is the engine. If it implements store.DeadLetters, the dead
	// letter scenarios run too, and if it implements store.FinishClaimer,
	// so does FinishAndClaim's. Run never closes it; register that with
	// t.Cleanup.
	Store store.Store
	// Twin, when set, is a second engine value over the same state as
	// Store, as another process would have (a second client of the same
	// server, say): the scenarios of what the processes sharing a queue
	// share use both. nil uses Store for both. Run never closes it either.
	Twin store.Store
	// Queue is a queue name that no other scenario uses. A scenario also
	// uses names that extend Queue with "/" and a suffix, which must be
	// just as free.
	Queue string
}

// Run runs every scenario on the engines that newHarness returns, each as a
// parallel subtest of t, which calls newHarness with its own t. Scenarios
// share no queue, so one engine, or one server, may serve them all.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			twin := h.Twin
			if twin == nil {
				twin = h.Store
			}
			for try := 1; ; try++ {
				q := h.Queue
				if try > 1 {
					q = fmt.Sprintf("%s/try%d", h.Queue, try)
				}
				why, slow := runOnce(sc.run, &fixture{t: t, s: h.Store, twin: twin, q: q, ctx: t.Context()})
				if !slow {
					return
				}
				if try == slowTries {
					t.Fatalf("the machine was too slow for this scenario in %d tries: %s", slowTries, why)
				}
				t.Logf("try %d was too slow to prove anything, running it again: %s", try, why)
			}
		})
	}
}

// slowTries is how many times Run runs a scenario that the machine was too
// slow for (see fixture.slow) before it fails.
const slowTries = 5

// tooSlow is the panic of fixture.slow.
type tooSlow string

// runOnce runs one try of a scenario, and reports whether the machine was
// too slow for it to prove anything, and why.
func runOnce(run func(*fixture), f *fixture) (why string, slow bool) {
	defer func() {
		if v := recover(); v != nil {
			s, ok := v.(tooSlow)
			if !ok {
				panic(v)
			}
			why, slow = string(s), true
		}
	}()
	run(f)
	return "", false
}

// scenarios lists the suite, one guarantee (or one corner of one) each.
var scenarios = []struct {
	name string
	run  func(f *fixture)
}{
	{"Order", testOrder},
	{"MaxBatch", testMaxBatch},
	{"KeysPerClaim", testKeysPerClaim},
	{"QueuesAreSeparate", testQueuesAreSeparate},
	{"Exclusive", testExclusive},
	{"ExclusiveConcurrent", testExclusiveConcurrent},
	{"AddRacesClaim", testAddRacesClaim},
	{"StaleHoldersRefused", testStaleHoldersRefused},
	{"LeaseLapses", testLeaseLapses},
	{"LapsedLeaseRefused", testLapsedLeaseRefused},
	{"ExtendKeepsLease", testExtendKeepsLease},
	{"StopAndDrain", testStopAndDrain},
	{"FairnessOldestReadyFirst", testFairnessOldestReadyFirst},
	{"FairnessRerunAtTail", testFairnessRerunAtTail},
	{"FairnessDelays", testFairnessDelays},
	{"Retry", testRetry},
	{"RetryWithoutDelay", testRetryWithoutDelay},
	{"Defer", testDefer},
	{"HoldRelease", testHoldRelease},
	{"FinishMore", testFinishMore},
	{"FinishAndClaim", testFinishAndClaim},
	{"DebounceWait", testDebounceWait},
	{"DebounceQuietPeriodMoves", testDebounceQuietPeriodMoves},
	{"DebounceMaxWait", testDebounceMaxWait},
	{"DebounceEndedByWaitZero", testDebounceEndedByWaitZero},
	{"DebounceBehindReadyValues", testDebounceBehindReadyValues},
	{"AddedWhileLeasedRunAfter", testAddedWhileLeasedRunAfter},
	{"First", testFirst},
	{"ClaimNext", testClaimNext},
	{"WaitWakesOnAdd", testWaitWakesOnAdd},
	{"WaitWakesOnFinish", testWaitWakesOnFinish},
	{"WaitWakesOnRelease", testWaitWakesOnRelease},
	{"WaitWakesOnRedrive", testWaitWakesOnRedrive},
	{"WaitTimesOut", testWaitTimesOut},
	{"WaitEndsWithCtx", testWaitEndsWithCtx},
	{"WaitHearsChangeBeforeIt", testWaitHearsChangeBeforeIt},
	{"Stats", testStats},
	{"StatsLapsedAndPending", testStatsLapsedAndPending},
	{"DeadLetterKept", testDeadLetterKept},
	{"DeadLetterPaging", testDeadLetterPaging},
	{"DeadLetterRedrive", testDeadLetterRedrive},
	{"DeadLetterPurge", testDeadLetterPurge},
	{"LargeAndBinaryValues", testLargeAndBinaryValues},
	{"UnusualKeys", testUnusualKeys},
	{"LongKeys", testLongKeys},
	{"AddNothing", testAddNothing},
	{"MaxValues", testMaxValues},
	{"MaxValuesConcurrent", testMaxValuesConcurrent},
	{"DoneContext", testDoneContext},
}
