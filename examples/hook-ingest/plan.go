package main

import "time"

// plan is the stream of events the demo sends for one session.
type plan struct {
	Session string
	// At holds when each event is sent, counted from the start.
	At []time.Duration
	// Busy marks a session that never goes quiet: it must be processed at
	// max-wait while its events keep coming.
	Busy bool
	// Crash makes the session's first processor kill itself right after
	// claiming a batch.
	Crash bool
}

// defaultPlans returns the demo's sessions, timed relative to the debounce
// settings so the demo shows the same behaviour at any scale:
//
//	burst       8 events in quick succession: one run
//	two-bursts  two bursts with a quiet pause between them: two runs
//	busy        an event every quiet/3 for 2.5×max-wait: runs at max-wait
//	crash       a burst whose first processor dies mid-batch: the next
//	            process delivers that batch
func defaultPlans(quiet, maxWait time.Duration) []plan {
	fast := quiet / 20
	return []plan{
		{Session: "burst", At: series(0, 8, fast)},
		{Session: "two-bursts", At: append(series(0, 6, fast), series(5*fast+3*quiet, 6, fast)...)},
		{Session: "busy", At: series(0, int(5*maxWait/2/(quiet/3)), quiet/3), Busy: true},
		{Session: "crash", At: series(0, 6, fast), Crash: true},
	}
}

// series returns n instants, every gap, from start on.
func series(start time.Duration, n int, gap time.Duration) []time.Duration {
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = start + time.Duration(i)*gap
	}
	return at
}
