// Package fifo provides two in-memory ready-queues that serve keys first
// come, first served and never hand out one key twice at once.
//
// # Queue: de-duplicated keys
//
// Queue follows the contract of client-go's workqueue. Use it when the key
// alone says what to do, as in "recompute user U".
//
//   - A key is waiting at most once; Add of a waiting key is a no-op.
//   - A key handed out by Get is processing until Done and is not handed
//     out again before. Add of a processing key marks it dirty, and Done
//     appends it at the tail: events that arrive during processing make the
//     key run again afterwards, behind the keys that were already waiting.
//   - Keys come out in the order they became waiting, across any number of
//     consumers. AddAfter makes a key waiting once a delay has passed.
//
// # Groups: ordered messages per key
//
// Groups holds messages partitioned by key and hands them out as leases.
//
//   - A key has at most one lease at a time.
//   - The messages of a key are leased in Put order and never skipped
//     except by Drop. Retry keeps them at the head of the key for a delay
//     and counts Lease.Attempt up; Defer does the same without counting
//     (the messages did not get their chance); Hold keeps them there until
//     Release. Ack and Drop report whether the key has messages left, and
//     so went to the tail again.
//   - A retried or deferred lease comes back with exactly the same
//     messages. Messages put meanwhile wait behind it and form the next
//     lease, at Attempt 1: every message gets its full attempts.
//   - Keys are served in the order their head became ready: put into an
//     empty key, left behind an ended lease, past a retry delay, released.
//   - GroupsConfig.MaxBatch 1 leases one message at a time (strict FIFO);
//     0 coalesces everything waiting for the key into one lease (bar the
//     rule above for a retried lease).
//
// # Several leases of a key
//
// GroupsConfig.PerKey n > 1 lets a key have up to n leases out at once,
// each of its own batch, so that the batches of one busy key run side by
// side. The rules above then hold per batch:
//
//   - Batches are leased in Put order: a key's next lease takes the first
//     of its messages not out on a lease. A retried or deferred batch is
//     leased again, as it was, before any message behind it that was
//     never leased; while its delay runs the key takes no new lease, so
//     nothing overtakes it.
//   - At most n leases of a key are out at once, and every message is on
//     at most one.
//   - Each lease ends by itself: Ack and Drop remove its messages only,
//     wherever they stand in the key, and report whether the key has
//     messages left (those on its other leases included). Hold holds the
//     key: no new lease until Release, while the leases already out go on
//     and end as they would. Release starts the attempts of the kept
//     batches over and makes them ready at once; those behind the key's
//     last lease out give up their size, as the held batch of a key with
//     one lease does.
//   - A key with fewer than n leases out and a batch ready is ready: a
//     key that just got a lease, or whose lease ended, goes to the tail,
//     behind the keys already waiting.
//   - Stats counts leases and messages as before; a key is Delayed or
//     Retrying while the first of its kept batches waits for its delay,
//     and BehindRetrying counts the messages never leased behind it.
//     KeyInfo.Leases counts a key's leases.
//
// With PerKey 0 or 1, Groups takes the paths it takes without the setting,
// at their cost. With n > 1, ending a lease, and leasing a key, cost O(n)
// more, and an Ack or Drop of a batch that is not the key's first copies
// the messages behind it.
//
// # Concurrency and shutdown
//
// Both types are safe for concurrent use by any number of producers and
// consumers. Get blocks until work is ready, shutdown or the end of its
// context. Delayed adds and retries share one heap, one timer and one
// goroutine per Queue or Groups, started on first use. ShutDown stops
// intake (Add is a no-op, Put returns ErrClosed) and Get keeps handing
// out what is ready, then returns ErrClosed. ShutDownWithDrain also waits
// until consumers have finished everything that was ready or in progress,
// or its context ends. A ShutDown called meanwhile ends that wait at once
// (ShutDownWithDrain then returns ErrClosed, as the drain did not
// finish): a program that drains on a first signal exits on a second. Both
// are idempotent.
//
// Both types keep client-go's lifecycle names, ShutDown and
// ShutDownWithDrain, where the rest of pacer says Shutdown(ctx) and Close:
// Queue is a drop-in for client-go's workqueue, and code and tests ported
// from it read the same. Their error is ErrClosed, the word every package
// of pacer uses for "accepts no more work": client-go's Get reports
// shutdown with a bool, so there is no error name of its to keep.
//
// The two differ on pending delays. Queue.ShutDown drops them and waits for
// the timer goroutine. Groups keeps them: a retried message still comes due
// and is handed out, Get waits for it before it returns ErrClosed, and
// ShutDownWithDrain waits until only held keys are left. Groups.Close then
// ends the timer goroutine and takes back every message still stored,
// ready, delayed or held, in order within each key. Stats gives the counts
// (stored, held, delayed, retrying and blocked behind a retry) in one
// snapshot.
//
// # Performance
//
// Get, Done, Ack and the other hot paths take one mutex, cost O(1) and do
// not allocate when work is ready; Queue.Get touches no map. Delayed adds
// and retries cost O(log n) in the delays pending. Figures, against a
// naive queue on a slice and a sync.Cond, and the command that reproduces
// them: BENCHMARKS.md at the repository root.
package fifo
