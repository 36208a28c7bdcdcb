package fifo

import "errors"

// ErrShutDown is returned by Queue.Get and Groups.Get once the queue is shut
// down and has nothing left to hand out, and by Groups.Put after shutdown.
var ErrShutDown = errors.New("fifo: shut down")
