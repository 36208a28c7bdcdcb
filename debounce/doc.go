// Package debounce collects events per key and acts once a key goes quiet.
//
// A Keyed debouncer gathers the values added to a key into a Burst and calls
// its fire function with the whole burst once the key has had no Add for
// Config.Wait, or for the quiet period AddWait opened the burst with, which
// may differ from burst to burst. Config.MaxWait serves a key that never
// goes quiet, Config.MaxItems fires a burst as soon as it is full, and
// Config.Leading also acts on the first value of a quiet key at once. With
// MaxWait equal to Wait and Leading, a Keyed is a throttle, as lodash's
// throttle is: the first value of a quiet key fires at once, then at most
// one burst per Wait with the values that came since.
//
//	d, err := debounce.New(debounce.Config{Wait: 5 * time.Second, MaxWait: time.Minute},
//		func(user string, b debounce.Burst[Event]) { queue.Add(user) })
//	...
//	d.Add(ev.User, ev)
//	...
//	d.Shutdown(ctx) // fires what is pending; Close discards it
//
// # Guarantees
//
//   - Every value passed to a successful Add is delivered to fire exactly
//     once, in its key's burst and in Add order, unless Cancel or Close
//     discards its burst first.
//   - A burst's deadline is its last Add plus its quiet period (Wait, or
//     the wait of the AddWait that opened it), but no later than its first
//     Add plus MaxWait, saturated at the latest instant the clock can
//     express, so that math.MaxInt64 means forever and never wraps into the
//     past. fire is called at or after the deadline. Once the deadline has
//     passed the burst is over, even if fire has not run yet: a later Add
//     opens a new burst.
//   - Flush, a burst that reaches MaxItems and the leading value of a
//     Leading burst fire at once: their deadline is the moment of the call.
//   - With Leading, a burst leads only on a quiet key: one that has had no
//     Add for the quiet period of its last burst, or whose burst Cancel
//     discarded since. A burst that opens sooner, after a MaxWait, MaxItems
//     or Flush fire, waits for its trailing edge like any other.
//   - fire runs on the debouncer's own goroutine, one call at a time, in
//     deadline order; bursts with equal deadlines fire in the order they were
//     scheduled (a burst is scheduled when it opens, an immediate fire when
//     it is requested). Immediate fires run there too: Add and Flush only
//     hand the burst over and wake the goroutine, so fire may not have run
//     yet when they return, and a fire never runs on the caller's goroutine.
//   - fire may call Add, AddWait, Flush, Cancel and Pending. It must not
//     block, for it holds up every other key, and must not call Shutdown or
//     Close.
//   - A panic in fire is not recovered: like a panic in the f of
//     time.AfterFunc, it crashes the program. Recover in fire if a burst
//     may be lost.
//   - All methods are safe for concurrent use.
//   - Shutdown and Close stop intake (Add returns ErrClosed) and fire the
//     bursts that are due or handed over. Shutdown also fires, at once, those
//     that are not due yet; Close discards them. Both wait for the fires to
//     return and the goroutine to exit; Shutdown gives up when its ctx ends.
//
// # Cost
//
// One goroutine and one timer serve every key; no goroutine or timer is
// made per key. A key holds memory only while it has an open burst: its
// state is dropped when the burst fires (with Leading, once the key is
// quiet). Add does not touch the schedule when it only pushes a deadline
// back; the goroutine finds out when the old deadline comes and reschedules
// (lazy update). First deadlines queue in a FIFO, since with one Wait for all
// keys they come in order; only deadlines that moved, or that AddWait makes
// come before the FIFO's last, go to a heap. A burst opened by AddWait with
// a wait other than Config.Wait holds one more small map entry.
//
// Add is O(1) while deadlines only move back, O(log n) in the open bursts
// when one moves earlier. A fire comes after its deadline by the runtime's
// timer latency plus the loop's share of the fires due at once. Figures,
// against a map of time.AfterFunc timers, and the command that reproduces
// them: BENCHMARKS.md at the repository root.
package debounce
