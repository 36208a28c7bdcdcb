// Package runnertest holds the scenarios that run pacer Runners on a store
// engine, written once for every engine: Runners sharing a store across
// instances (order, exclusivity, fences, debounce, lease hand-over), dead
// letters, and a server restart under Add traffic. Each engine's test
// supplies only what differs: its stores and, for a restart, how to stop
// and start its server. The scenarios run as subtests of the engine's own
// test, so `go test -v` names the engine that ran.
//
// It is imported by tests only.
package runnertest
