// Package fifo provides two in-memory ready-queues that serve keys first
// come, first served and never hand out one key twice at once.
//
// Queue is a de-duplicated queue of keys with the contract of client-go's
// workqueue: a key waits at most once, a key being processed is not handed
// out again until Done, and a key added while it is processed runs again
// afterwards, at the tail. Use it when the key alone says what to do (for
// example "recompute user U").
//
// Groups holds ordered messages per key and hands them out as leases: at
// most one lease per key, messages in Put order, never skipped except by
// Drop. A failed lease is retried after a delay, dropped, or held until
// released. GroupsConfig.MaxBatch 1 delivers strictly one message at a time;
// 0 coalesces everything waiting for the key into one lease.
//
// Both are safe for concurrent use by any number of producers and
// consumers. Delayed adds and retries share one timer goroutine per queue,
// started on first use and stopped by ShutDown. After ShutDown new work is
// refused, pending delays are dropped, and Get hands out what is ready, then
// returns ErrShutDown; ShutDownWithDrain also waits for the consumers to
// finish it.
package fifo
