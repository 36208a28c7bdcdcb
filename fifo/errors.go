package fifo

import "errors"

// ErrClosed is returned by Queue.Get and Groups.Get once the queue is shut
// down and has nothing left to hand out, by Groups.Put after shutdown, and
// by ShutDownWithDrain when a ShutDown ended its wait before the drain.
// Like the ErrClosed of the other packages of pacer, it is this package's
// own: a package built on fifo reports its own closed error, not this one.
var ErrClosed = errors.New("fifo: closed")
