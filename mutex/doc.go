// Package mutex provides mutual exclusion per key: Keyed for goroutines of
// one process, LockFile for processes on one host.
// For processes on any host, through Redis, see package redis/redismutex.
//
// # Keyed
//
// A Keyed[K] is a set of mutexes indexed by a comparable key, such as one
// per account or per user, created on demand:
//
//   - Exclusive: at most one holder per key at a time.
//   - Fair: waiters for a key acquire it in arrival order; Unlock hands the
//     key to the first waiter, and neither Lock nor TryLock barges in while
//     others wait.
//   - Independent: different keys never block each other.
//   - Cancellable: LockContext and Do give up when their context ends, leave
//     no trace and keep the other waiters' order.
//   - Idle costs nothing: a key's state is removed when nobody holds or waits
//     for it, and Len returns to 0.
//   - The zero value is ready to use; safe for concurrent use. Keyed owns no
//     goroutines and needs no Close.
//
// Unlock of a key that is not locked panics ("mutex: Unlock of unlocked
// key"), as sync.Mutex does.
//
// # LockFile
//
// LockFile takes an exclusive flock(2) lock on a file, so two processes
// never run the same critical section at once. The lock holds until unlock
// is called or its holder exits or crashes, whatever the garbage collector
// does; the kernel releases it at exit, so no stale-lock timeout is needed.
// LockFile is Unix-only (Linux, the BSDs, macOS, illumos); elsewhere it
// returns an error.
//
// # Performance
//
// Keyed spreads keys over 32 internal shards by hash, so goroutines locking
// different keys rarely contend; each shard keeps its first held keys in
// inline slots and only spills into a map when crowded. Locking a free key
// and unlocking it takes no map operation in the common case and does not
// allocate in steady state; a goroutine that has to wait allocates its
// place in the queue (one waiter and one channel). The fixed shard table
// makes a Keyed about 5 KB for string keys.
//
// Lock and Unlock of a free key are O(1) and allocate nothing in steady
// state. Figures, against a mutex over a map of reference-counted per-key
// mutexes, and the command that reproduces them: BENCHMARKS.md at the
// repository root.
package mutex
