// Package redistest holds what the tests and benchmarks of the Redis
// packages share: a redis-server of a test's own, a benchmark that
// times an operation against PING in the same run, and the server's CPU
// and commands read from INFO.
//
// It is test support only: it imports testing and testify, and only
// _test.go files import it.
package redistest
