package pacer

import "time"

// EventKind names a step in the life of a value or a batch.
type EventKind uint8

// The lifecycle steps reported to Config.OnEvent.
const (
	// EventReceived: Add accepted a value (Size 1).
	EventReceived EventKind = iota + 1
	// EventReady: a key's debounced burst entered its queue (Size values;
	// Delay is the time from the burst's first value to now). With a
	// Config.Store it is reported only for values added without Debounce:
	// a burst closes in the engine, unseen by the Runner. A value added
	// with AddAfter or AddAt reports none: it enters its queue in the
	// engine when its time comes.
	EventReady
	// EventStarted: a batch was handed to the handler (Attempt, Size; Delay
	// is the time spent waiting for the window and the Limiter).
	EventStarted
	// EventFinished: the handler succeeded (Duration is its running time).
	EventFinished
	// EventRerun: the key still had values when its batch ended (they
	// arrived during the call, or did not fit in MaxBatch), so it went back
	// to the tail of the ready queue (Size is the batch just done).
	EventRerun
	// EventRetry: the handler failed and the batch will be tried again
	// (Err, Attempt of the failed call, Delay until the retry, Behind the
	// values of the key that wait for it). It is also reported, without
	// counting an attempt, for a batch whose call the window's close cut
	// short: it runs again when the window opens.
	EventRetry
	// EventDropped: the batch was given up (Err says why: Permanent,
	// attempts used up, or a Shutdown that could not finish it).
	EventDropped
	// EventHeld: the batch used up its attempts and its key is held until
	// Release (Config.Exhausted == ExhaustedHold), with Behind values
	// waiting for it.
	EventHeld
	// EventSkipped: a batch did not start because the window was closed; the
	// key waits for the window to open (Delay until it opens).
	EventSkipped
)

var eventNames = [...]string{
	EventReceived: "received",
	EventReady:    "ready",
	EventStarted:  "started",
	EventFinished: "finished",
	EventRerun:    "rerun",
	EventRetry:    "retry",
	EventDropped:  "dropped",
	EventHeld:     "held",
	EventSkipped:  "skipped",
}

// String returns the lower-case name of k, e.g. "retry".
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "unknown"
}

// An Event reports one lifecycle step of a Runner to Config.OnEvent. Fields
// that do not apply to a kind are zero.
type Event[K comparable] struct {
	Kind     EventKind
	Key      K
	Time     time.Time     // when it happened, on the Runner's clock
	Attempt  int           // 1 for a batch's first handler call
	Size     int           // number of values concerned
	Behind   int           // values of the key queued behind the batch, which wait for it (retry, held); 0 with a Config.Store
	Delay    time.Duration // a wait: time to ready, to start, or until a retry (see the kinds)
	Duration time.Duration // the handler's running time (finished, retry, dropped, held)
	Err      error         // the handler's error (retry, dropped, held)
}
