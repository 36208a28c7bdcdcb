// Package redismutex provides a lock per key shared by processes on any
// number of hosts, through one Redis server (7.0 or later): the
// distributed form of mutex.Keyed, in the single-instance design of the
// Redis documentation's "Distributed locks with Redis", with fencing
// tokens and a local expiry added.
//
//	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	m, err := redismutex.New(c, redismutex.Config{Name: "accounts"})
//	...
//	err = m.Do(ctx, "account-42", func(ctx context.Context) error {
//		fence, _ := redismutex.FenceFrom(ctx)
//		return store.Update(ctx, account, fence) // refused if a bigger fence wrote first
//	})
//
// # What a lock promises
//
//   - Exclusive, within its lease: while Redis holds a key's lock for one
//     holder, TryLock, LockContext and Do of every Locker with the same
//     Prefix and Name fail or wait for that key. A lock is a Redis key set
//     with SET NX PX to a random token of its holder (crypto/rand), which
//     the renewal (compare and PEXPIRE) and the release (compare and
//     delete) check, so a holder never extends or deletes a lock that is
//     no longer its own.
//   - Leased: a lock lapses in Redis TTL after it was taken or last
//     renewed, so the lock of a holder that crashed, or was cut off, is
//     free again after at most TTL. The holder's Locker renews it every
//     TTL/3 while it is held; one goroutine per Locker, on one timer,
//     times the renewals of all its locks.
//   - Lost loudly: the holder's Context (and Do's fn's ctx) is cancelled
//     with cause ErrLockLost when a renewal finds the lock gone or taken,
//     or when no renewal succeeded for TTL minus a safety margin of
//     TTL/10, counted on the holder's clock from when the last successful
//     call was sent (Redis started its TTL later), so that a holder cut
//     off from Redis gives the lock up before Redis lets another take it.
//     A renewal that fails is tried again every TTL/10 until then. Unlock
//     then returns ErrLockLost.
//   - Fenced: each acquisition gets a fence (Lock.Fence, FenceFrom), which
//     grows with every acquisition of any key of the Name, by any Locker,
//     and so with every acquisition of each key. The fence is one counter
//     per Name, incremented by the same function that takes the lock, and
//     kept without expiry, so that fences never repeat even when a key
//     was not locked for a long time. Being one key per Name, not per key
//     locked, it costs no memory that grows with the keys ever locked. An
//     expiry on the counter, however long, would let an idle Name start
//     again at 1, and a resource that refuses old fences would then refuse
//     every new holder.
//   - Waiting without polling: LockContext tries once and, if the lock is
//     held, sleeps until it is released or its remaining time (told by
//     the same function) runs out, then tries again. A release of a lock
//     that someone waits for publishes the key on one channel per Name;
//     each Locker subscribes to it once, lazily, on its first wait, with
//     one connection shared by its waiters, until Close. Waiters of one
//     Locker for one key queue, first come first served, and only the
//     first of them asks Redis, so a release does not start a stampede.
//     Across Lockers there is no fairness: after a release, whichever
//     asks first gets the lock, and a TryLock may take it before every
//     waiter.
//   - Closed cleanly: Close ends the waits (ErrClosed), cancels the
//     Contexts of the locks held (cause ErrClosed), and waits for the
//     Locker's goroutines: the one that times the renewals, a renewal in
//     flight, and the Pub/Sub receiver.
//
// A Locker is safe for concurrent use; so is a Lock.
//
// # What a lock does not promise
//
// Like the Redis documentation, and Martin Kleppmann's "How to do
// distributed locking", say of this design:
//
//   - One Redis, no Redlock. The locks are as durable as that server's
//     data. Replication is asynchronous, so a failover to a replica can
//     lose a lock that was just taken (two holders at once) and repeat
//     fences; a restart without persistence loses every lock and resets
//     the fences to 1. Use an AOF with appendfsync always where this
//     matters, and rely on the fence, not on the lock, to protect data.
//   - A lease is a promise about time, and processes pause. A holder
//     stopped (by a long GC, swapping, SIGSTOP, a VM migration) for
//     longer than its TTL learns that its lock is lost only when it runs
//     again, and may first finish a write it started under the lock,
//     while another holder, with a bigger fence, writes too. Cancellation
//     cannot prevent that; the fence can: have the resource refuse writes
//     whose fence is below the biggest it has seen, e.g. with a
//     conditional UPDATE ... WHERE fence <= $1.
//   - Clocks matter only for the local expiry: Redis expires a lock by its
//     own clock, and a holder gives it up by its own monotonic clock, so
//     that a wall-clock jump changes neither. The two clocks must only run
//     at about the same rate: the margin of TTL/10 covers a drift far
//     beyond that of real clocks, and the time the holder takes to see
//     its Context end. A holder's work should check its Context often
//     compared to that margin.
//   - Not reentrant: a key held by a Locker is held for that Locker too;
//     its TryLock returns ErrLocked, and its LockContext waits for the
//     Unlock, which may never come from the goroutine that waits.
//   - Unlock that cannot reach Redis leaves the lock to lapse at the end
//     of its TTL. go-redis commands observe a ctx's deadline only with
//     Options.ContextTimeoutEnabled; the local expiry does not depend on
//     it.
//
// # Data model
//
// The keys of a Name all start with "{Prefix:lock:Name}:", so that on
// Redis Cluster they share one hash slot (a PUBLISH reaches the
// subscribers of every node there). A lock is "...:k:KEY", a STRING
// holding its holder's token, with a "*" appended once a LockContext
// waits for it; the Name's fence counter is "...:fence"; the releases
// that someone waits for are published on "...:released". There are three Lua
// scripts, in lua/, each a function called with FCALL in one round trip:
// acquire.lua (SET NX PX, then INCR of the fence; or, if the lock is
// held, SET NX GET answers its holder, then its remaining PTTL, marking it
// for a waiter), renew.lua (compare, PEXPIRE) and release.lua (compare,
// DEL, and PUBLISH if marked).
//
// The three make up one Redis function library, "pacer_lock_" and a hash
// of its code, which a Locker loads into a server that lacks it (into
// every master of a cluster) when a call reports so: on the first call to
// a new server, and after a restart without persistence or FUNCTION
// FLUSH; then it calls again. Processes that run different versions of
// this package each call their own library, on the same keys; an old
// version's library stays in the server until FUNCTION DELETE removes it.
// The client's Redis user must be allowed FUNCTION LOAD and FCALL.
//
// # Failures
//
// When Redis cannot be reached, TryLock, LockContext and Do return the
// client's error (after go-redis' own retries), wrapped with
// "redismutex: "; the locks held are lost, as above, TTL minus the margin
// after their last renewal; the waiters of a LockContext sleep until the
// time they were told, then try again, and the Pub/Sub receiver
// subscribes anew, with a backoff, and wakes every waiter once it is
// back, since a release may have been missed. A silent subscription is
// checked with a PING after max(TTL, 1 s) without a message.
//
// # Performance
//
// A free lock costs two round trips, TryLock then Unlock, each one
// function call: a floor of two FCALL, which cost more than two PINGs.
// Measured on a 2-core virtual machine shared with other work (load
// average 5.5 to 7.4), against the local Redis 7.0 that other tests used
// at the same time, with go test -bench 'Ping|Two|LockUnlock' -benchtime
// 20000x -count 5: alternating rounds of 64 calls and 64 PINGs, serially
// and by 8 goroutines, the total time of the calls over the PINGs',
// ranges over the 5 runs:
//
//	                                  serial          8 in flight
//	PING against PING                 0.89-1.08x      0.99-1.02x
//	PING                              22-48 µs        12-19 µs per call
//	TryLock + Unlock of a free key    2.25-2.52x      2.21-2.32x PING
//	two functions that return 1       1.83-2.22x      1.73-2.14x PING
//	two scripts that return 1         2.08-2.47x      2.02-2.13x PING
//
// Three more runs on a quieter machine (load average 2): 2.25-2.64x
// serial, 2.21-2.28x in flight.
//
// Five more runs on a quiet machine (load average 1.2, PING 43-56 µs
// serial), after two changes: the fence is one counter per Name (an INCR
// of a key that exists, not of a new one), and taking a lock no longer
// wakes the renewal loop (see below). The figure of each run, then the
// median of its rounds:
//
//	                                  serial          8 in flight
//	TryLock + Unlock of a free key    2.17-2.48x      2.22-2.33x PING
//	  median of the rounds            1.99-2.38x      2.14-2.37x
//	the commands alone, in two        2.30-2.80x      2.04-2.13x
//	functions (SET NX PX GET and
//	INCR; GET and DEL), medians       1.99-2.56x      1.97-2.11x
//
// Serially, TryLock and Unlock now cost what their commands cost, and
// meet the 2.2x aimed at in three runs of five (four by the median); in
// flight they stay 0.1-0.25x above those commands, and above 2.2x in four
// of five runs.
//
// That is still above the 2.2x aimed at, by what the functions do (SET NX
// PX and INCR; GET and DEL: about 2 µs of Redis' time more than two
// empty ones, by INFO commandstats on a server of its own) and what the
// client does (a token from crypto/rand, the names, the bookkeeping of
// the renewals). Each side of the lock needs its two commands: the fence
// must outlive the lock, so it is a key of its own, and Redis 7.0 has no
// command that deletes a key only if it holds a value. Before the package
// called functions it ran the same code as scripts with EVALSHA; the two
// in turn, five runs each (-count 1, load average 3.7 to 12.3): TryLock +
// Unlock 2.23-2.60x serial and 2.38-2.46x in flight with EVALSHA,
// 2.12-3.15x (2.12-2.63x but for one run) and 2.32-2.53x with FCALL, a
// difference within the noise of this machine. A LockContext that marks
// a held lock now learns its holder from the SET NX itself (SET ... GET),
// one command fewer than before.
//
// TestMeasureTimerBeforeRoundTrip (PACER_BENCH=1), on a redis-server of
// its own, one call at a time, put the medians of TryLock and Unlock at
// 24.4 µs and 22.9 µs next to a PING of 21.2 µs (2.23x) in its quietest
// run; in the others the machine's load moved the PINGs between 20 and
// 66 µs and the ratio with them.
//
// The renewals stay off that path: TryLock pushes the lock on a heap
// under a mutex, Unlock takes it off, and neither touches a timer, nor
// wakes the renewal loop but for the first lock after a quiet spell of
// TTL/3: before, a loop that found its heap empty slept without a timer,
// so each TryLock of a caller that locked and unlocked in turn woke it (a
// thread, on an idle core), 0.1-0.3x of a PING serially. A timer per
// lock (time.AfterFunc) cost more: arming a timer that becomes the
// runtime's earliest wakes a thread blocked in the network poller, which
// added 3.6-5.8 µs to the next round trip, a PING of 20-23 µs, in the
// same measurement. The Context of a Lock is made only when
// asked for, and the functions' commands are built in one slice of
// arguments: 20 allocations per TryLock and Unlock in the benchmark, as
// many as with the scripts before.
package redismutex
