package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Late is how late the suite lets a deadline be met, or a Wait wake up,
// before it fails, at scale 1: generous, so that a loaded machine does not
// fail it.
const Late = time.Second

// Harness is the engine under test, as one scenario of Run sees it.
type Harness struct {
	// Store is the engine. If it implements store.DeadLetters, the dead
	// letter scenarios run too; if it implements store.FinishClaimer, so
	// does FinishAndClaim's; if it implements store.Inspector, so do the
	// inspection scenarios, which read through Twin when Twin implements
	// it too, as an operator's process would; if it implements
	// store.Operator, so do the operation scenarios, which steer through
	// Twin in the same way; and if it implements
	// store.TxAdder, so does TxAdder's, which needs BeginTx. Run never
	// closes it; register that with t.Cleanup.
	Store store.Store
	// Twin, when set, is a second engine value over the same state as
	// Store, as another process would have (a second client of the same
	// server, say): the scenarios of what the processes sharing a queue
	// share use both, and the Runner scenarios run one instance on each.
	// nil uses Store for both. Run never closes it either.
	Twin store.Store
	// Queue is a queue name that no other scenario uses. A scenario also
	// uses names that extend Queue with "/" and a suffix, which must be
	// just as free.
	Queue string
	// BeginTx begins a transaction of the engine's database, of a type
	// that Store's AddTx takes, for the TxAdder scenario; the scenario
	// ends every transaction it begins. It is required when Store
	// implements store.TxAdder, and unused otherwise.
	BeginTx func(ctx context.Context) (Tx, error)
}

// Tx is a transaction that Harness.BeginTx began. The TxAdder scenario
// passes it to AddTx as it is, and ends it with Commit or Rollback. A
// pgx.Tx is one.
type Tx interface {
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Run runs every scenario that needs only the engine's stores, each as a
// parallel subtest of t, which calls newHarness with its own t: the engine
// scenarios, TxAdder's, and the Runner scenarios, whose Runners take their
// queue names from Harness.Queue too. Scenarios share no queue, so one
// engine, or one server, may serve them all. A scenario the machine was
// too slow for runs again with its durations stretched (see the package
// doc), on a queue that extends Harness.Queue.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runScaled(t, sc.run, newHarness(t))
		})
	}
}

// A scenario is one guarantee of the suite (or one corner of one).
type scenario struct {
	name string
	run  func(f *fixture)
}

// scenarios lists the scenarios of Run.
var scenarios = []scenario{
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
	{"TenantTurns", testTenantTurns},
	{"TenantWeights", testTenantWeights},
	{"TenantNoCredit", testTenantNoCredit},
	{"TenantKeys", testTenantKeys},
	{"TenantPaths", testTenantPaths},
	{"TenantsAhead", testTenantsAhead},
	{"TenantsAheadBound", testTenantsAheadBound},
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
	{"DelayNotBefore", testDelayNotBefore},
	{"DelayOrderKept", testDelayOrderKept},
	{"DelayBatchStops", testDelayBatchStops},
	{"DelayEndsBurst", testDelayEndsBurst},
	{"DelayInspect", testDelayInspect},
	{"DelayWaitWakes", testDelayWaitWakes},
	{"DelayMaxValues", testDelayMaxValues},
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
	{"InspectStates", testInspectStates},
	{"InspectReadySince", testInspectReadySince},
	{"InspectErr", testInspectErr},
	{"InspectHolder", testInspectHolder},
	{"InspectValues", testInspectValues},
	{"InspectQueues", testInspectQueues},
	{"InspectPaging", testInspectPaging},
	{"InspectFilters", testInspectFilters},
	{"InspectModel", testInspectModel},
	{"InspectDoneContext", testInspectDoneContext},
	{"OperatePauseQueue", testOperatePauseQueue},
	{"OperateResumeQueueWakes", testOperateResumeQueueWakes},
	{"OperatePauseKey", testOperatePauseKey},
	{"OperatePauseKeyClocksRun", testOperatePauseKeyClocksRun},
	{"OperateResumeKeyWakes", testOperateResumeKeyWakes},
	{"OperateRetryNow", testOperateRetryNow},
	{"OperateRetryNowWakes", testOperateRetryNowWakes},
	{"OperateDropKey", testOperateDropKey},
	{"OperateAhead", testOperateAhead},
	{"OperateAheadBound", testOperateAheadBound},
	{"OperateDoneContext", testOperateDoneContext},
	{"LargeAndBinaryValues", testLargeAndBinaryValues},
	{"UnusualKeys", testUnusualKeys},
	{"LongKeys", testLongKeys},
	{"AddNothing", testAddNothing},
	{"MaxValues", testMaxValues},
	{"MaxValuesConcurrent", testMaxValuesConcurrent},
	{"DoneContext", testDoneContext},
	{"TxAdder", testTxAdder},
	{"RunnersShare", testRunnersShare},
	{"RunnerRetriesAndDeadLetters", testRunnerRetriesAndDeadLetters},
	{"RunnerMaxValues", testRunnerMaxValues},
	{"PerKeyLimit", testPerKeyLimit},
	{"PerKeyIndependentFinish", testPerKeyIndependentFinish},
	{"PerKeyRetry", testPerKeyRetry},
	{"PerKeyLapse", testPerKeyLapse},
	{"PerKeyHold", testPerKeyHold},
	{"PerKeyFairness", testPerKeyFairness},
	{"PerKeyConcurrent", testPerKeyConcurrent},
	{"PerKeyTenants", testPerKeyTenants},
	{"KeyRateSpacing", testKeyRateSpacing},
	{"KeyRateBurst", testKeyRateBurst},
	{"KeyRateOthersGoOn", testKeyRateOthersGoOn},
	{"KeyRateOutlivesValues", testKeyRateOutlivesValues},
	{"KeyRateOff", testKeyRateOff},
	{"KeyRatePerKey", testKeyRatePerKey},
	{"KeyRateTenants", testKeyRateTenants},
	{"KeyRateInvalid", testKeyRateInvalid},
	{"KeyRateManyWithoutToken", testKeyRateManyWithoutToken},
}
