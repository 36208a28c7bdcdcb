// Package storetest is the conformance suite of store engines. It holds an
// engine to every guarantee of the store package doc, and pacer Runners on
// the engine to the Runner's guarantees across instances: the same
// scenarios for Memory, for the engines of this repository and for an
// engine written anywhere else. An engine is done when the suite passes on
// it, under -race.
//
// The suite has one entry point per thing it needs from the engine:
//
//   - [Run] needs stores: a fresh one per scenario and a second handle on
//     the same state, as another process has ([Harness]). It runs the
//     engine scenarios, one guarantee of the store contract each; the
//     scenarios of [store.Inspector], where the engine implements it:
//     every state a key can show and since or until when, values, queues,
//     pages that show every key once, filters by state and by prefix of
//     any bytes, and a model of the contract that random operations are
//     checked against; the scenarios of [store.Operator], where the
//     engine implements it: a paused queue or key leases nothing while
//     values land and leases out end as usual, a resume wakes a worker of
//     another handle and puts a key at the tail of the ready order,
//     RetryNow, DropKey's one dead letter and lost lease, and
//     KeyInfo.Ahead; the scenarios of [store.FairTenants], where the
//     engine implements it: a tenant with 10,000 ready keys lets one
//     with 10 have every other turn, weights 3 and 1 split 4,000 turns
//     3:1, a tenant back from idle earns no credit, every path into
//     the ready order keeps a key in its tenant's turns, and, where the
//     engine implements store.Operator and store.Inspector too,
//     KeyInfo.TenantsAhead counts the tenants whose turn comes first; the
//     [store.TxAdder] scenario, where the engine
//     implements it, with
//     transactions that [Harness.BeginTx] begins; and the Runner scenarios:
//     two Runners, one on each handle, share order, exclusivity, fences,
//     debounce, the hand-over of a lease at shutdown, retries, dead letters
//     and one Config.MaxValues bound.
//   - [RunRestart] needs a server of the test's own, and how to stop it
//     and start it again: a Runner under Add traffic refuses Adds at once
//     while the server is down, backs off, resumes by itself, and handles
//     every value whose Add returned nil.
//   - [RunPartition] needs the server's address and a way to open a store
//     that reaches the server at another one, which the suite cuts off as
//     a network partition does: the Runner cut off stops its handler before
//     another instance takes the key, and the key is not lost.
//   - [RunProcesses] needs a test of the engine's own that calls [Child],
//     and a string that tells it where the data is: Runners in several OS
//     processes share one Config.MaxValues bound exactly; and, where the
//     engine implements [store.Operator], a queue paused from another
//     process starts no batch in any of them until it is resumed, and
//     loses nothing; and, given a [KeyGateFunc] that makes the engine's
//     limit per key on its server ([Processes.KeyGate]), each key's calls
//     over all of them keep its rate while other keys run at once.
//
// An engine whose state lives in the process (Memory) runs Run alone.
// Every entry point runs its scenarios as subtests of the engine's test,
// so that `go test -v` names the engine that ran, and never closes the
// stores it is given: register that with t.Cleanup.
//
// # Time
//
// The suite runs on real time, because an engine's clock is its own (a
// server's clock cannot be mocked from a test). Its engine scenarios keep
// their durations short (tens of milliseconds) and assert in two ways:
// lower bounds exactly (nothing is ready before its deadline, measured from
// before the call that set it) and upper bounds generously (within Late of
// it). They wait with the engine's own Wait and Claim, bounded by a
// deadline, never with a sleep that hopes things happened. A scenario that
// finds the machine too slow for its timings (two Adds that took longer
// than the quiet period they had to fit in, say) runs again, on a queue of
// its own, with every duration of its own (quiet periods, TTLs, delays,
// waits, Late) multiplied by a scale that grows until the machine keeps up:
// a scenario never passes without having checked its assertions, and a
// machine too slow for it even at the largest scale fails it.
//
// # Processes
//
// The multi-process scenario and the measurements of the engines run the
// engine's test binary again with one test selected ([StartProcess]); the
// parent and the process talk over pipes ([Process]). The engine's test
// file provides the process's entry, a top-level test that skips when it
// is not run as a process.
//
// A typical engine's tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Harness {
//			ns := freshNamespace(t)
//			return storetest.Harness{Store: open(t, addr, ns), Twin: open(t, addr, ns), Queue: t.Name()}
//		})
//	}
//
//	func TestRestart(t *testing.T) {
//		srv := startServer(t)
//		storetest.RunRestart(t, open(t, srv.Addr(), "restart"), srv.Start,
//			storetest.Stop{Name: "SIGTERM", Do: srv.Stop})
//	}
//
//	func TestPartition(t *testing.T) {
//		ns := freshNamespace(t)
//		storetest.RunPartition(t, storetest.Partition{Addr: addr, Direct: open(t, addr, ns),
//			Open: func(t *testing.T, via string) store.Store { return open(t, via, ns) }})
//	}
//
//	func TestProcesses(t *testing.T) {
//		ns := freshNamespace(t)
//		storetest.RunProcesses(t, storetest.Processes{Store: open(t, addr, ns), Where: ns,
//			Child: "TestStoretestChild", KeyGate: keyGate})
//	}
//
//	// TestStoretestChild is a process of TestProcesses; run on its own, it skips.
//	func TestStoretestChild(t *testing.T) {
//		storetest.Child(t, func(t *testing.T, ns string) store.Store { return open(t, addr, ns) }, keyGate, nil)
//	}
//
//	// keyGate is the engine's limit per key in the namespace (nil if it has none).
//	func keyGate(t *testing.T, ns string, l storetest.KeyRate) ratelimit.KeyGate[string] {
//		return newKeyedLimit(t, addr, ns, l.Name, l.Rate, l.Burst)
//	}
//
// Only tests import this package. It imports the root package pacer and
// package ratelimit, for the Runner scenarios, and testify.
package storetest
