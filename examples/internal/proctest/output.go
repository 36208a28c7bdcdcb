// Package proctest holds what the example programs' tests need to run a
// program as an OS process. It is imported by tests only.
package proctest

import (
	"bytes"
	"sync"
)

// An Output is a bytes.Buffer that a child process writes to while the
// test reads it: give it as the command's Stdout and Stderr. Its zero
// value is empty and ready to use; it is safe for concurrent use.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, as the child process's output.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
