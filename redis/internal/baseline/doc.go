// Package baseline measures, in the same run as pacer's own benchmarks,
// the libraries that pacer's figures are compared with, and the floor of
// pacer's strict guarantees on Redis (package floor: a store that keeps
// them and does nothing else). It is a module of its own, so that pacer's
// users never download what only this comparison needs; run it from this
// directory with go test -bench, and its measurements with PACER_BENCH=1.
package baseline
