//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package main

// lockQueue takes no lock where mutex.LockFile (flock) is missing: one
// process per directory is then up to the operator.
func lockQueue(dir string) (unlock func() error, err error) { return func() error { return nil }, nil }
