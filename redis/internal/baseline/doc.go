// Package baseline measures, in the same run as pacer's own benchmarks,
// the libraries that pacer's figures are compared with. It is a module of
// its own, so that pacer's users never download what only this
// comparison needs; run it from this directory with go test -bench.
package baseline
