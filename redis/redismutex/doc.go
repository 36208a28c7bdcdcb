// Package redismutex provides a lock per key shared by processes on any
// number of hosts, through one Redis server (7.0 or later): the
// distributed form of mutex.Keyed, in the single-instance design of the
// Redis documentation's "Distributed locks with Redis", with fencing
// tokens and a local expiry added.
//
//	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	m, err := redismutex.New(ctx, c, redismutex.Config{Name: "accounts"})
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
// The keys of a Name all start with "{Prefix:lock:Name}:", in the name
// encoding below, so that on Redis Cluster they share one hash slot (a
// PUBLISH reaches the subscribers of every node there). A lock is
// "...:k:KEY", a STRING holding its holder's token, with a "*" appended
// once a LockContext waits for it; the Name's fence counter is
// "...:fence"; the releases that someone waits for are published on
// "...:released". There are three Lua
// scripts, in lua/, each a function called with FCALL in one round trip:
// acquire.lua (SET NX PX, then INCR of the fence; or, if the lock is
// held, SET NX GET answers its holder, then its remaining PTTL, marking it
// for a waiter), renew.lua (compare, PEXPIRE) and release.lua (compare,
// DEL, and PUBLISH if marked).
//
// The three make up one Redis function library, "pacer_lock_" and a hash
// of its code, which New loads into the server (into every master of a
// cluster), and a call loads again where it reports the library missing:
// after a restart without persistence or FUNCTION FLUSH, or on a new
// node; then it calls again. Processes that run different versions of
// this package each call their own library, on the same keys; an old
// version's library stays in the server until FUNCTION DELETE removes it.
// The client's Redis user must be allowed FUNCTION LOAD and FCALL.
//
// # The name encoding
//
// The braces hold Prefix, "lock" and Name, each escaped ("%" written
// "%25", ":" written "%3A", every other byte as it is), joined by ":".
// Prefix "P" and Name "eu:lock:accounts" give
// "{P:lock:eu%3Alock%3Aaccounts}", Prefix "P:lock:eu" and Name "accounts"
// give "{P%3Alock%3Aeu:lock:accounts}"; names without "%" or ":" read as
// they are, "{pacer:lock:accounts}". So Lockers of different Prefix or
// Name share no lock, fence or channel. That rests on three things: an
// escaped part holds no ":", so the ":" in the braces split them back
// into the three; no part holds a brace (New refuses one), so the first
// "}" ends them; and what follows is "fence" or "released", which hold no
// ":", or "k:" before a key, so the first ":" after the braces tells
// which. The stores of package redisstore write two parts in their
// braces, and the limits of redisrate "rate" as the second, so none of
// their keys is a Locker's.
//
// # Failures
//
// New checks the server before it returns, within its ctx: it dials it
// once and waits for PING's reply, reads its version (HELLO), and loads
// and calls the function library. A wrong address, a server older than
// 7.0, or a user not allowed FUNCTION LOAD or FCALL fails there, at once,
// with an error that names the address and what is missing:
// "redismutex: 127.0.0.1:6390: not reachable: dial tcp 127.0.0.1:6390:
// connect: connection refused". A wrong address fails at its first dial,
// whatever retries the client's options allow.
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
// function call, which make the four commands a fenced lock needs: SET NX
// PX (with GET, which answers a held lock's holder) and INCR of the fence;
// GET and DEL, to delete the lock only if it is still the caller's. The
// fence must outlive the lock, so it is a key of its own, and Redis 7.0
// has no command that deletes a key only if it holds a value.
//
// The renewals stay off that path: TryLock pushes the lock on a heap
// under a mutex and Unlock takes it off; neither arms a timer of the
// runtime (one goroutine per Locker times every renewal on one timer), and
// only the first lock after a quiet spell of TTL/3 wakes that goroutine.
// The Context of a Lock is made only when asked for.
//
// Figures, against a PING of the same run and against the four commands
// alone, and the commands that reproduce them: BENCHMARKS.md at the
// repository root.
package redismutex
