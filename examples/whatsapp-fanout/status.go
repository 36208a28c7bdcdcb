package main

// Final statuses of a reminder's fan-out (DESIGN section 5).
const (
	statusSuccess = "success" // every target sent
	statusPaused  = "paused"  // the window closed with targets still pending; resumable
	statusPartial = "partial" // every target attempted, some failed or skipped
	statusFailed  = "failed"  // nothing sent: every send failed, or the window had closed before the first send; not resumable
)

// Per-target (group) statuses in the state file.
const (
	groupPending = "pending" // not every part sent yet
	groupSent    = "sent"    // every part sent
	groupFailed  = "failed"  // a part failed after its retries
	groupSkipped = "skipped" // the service refused the group for good (e.g. not a member)
)

// tally counts a reminder's targets by status, and its parts sent.
type tally struct {
	Targets, Sent, Failed, Skipped, Pending int
	PartsSent                               int
}

// resolveStatus applies the rules of DESIGN section 5 to the tally of a
// run that has stopped: windowClosed says whether it stopped because the
// delivery window closed (or was closed when it began).
//
//	pending left, window closed:  paused, or failed if no part was ever sent
//	nothing pending:              success if every target was sent,
//	                              failed if no part was ever sent,
//	                              partial otherwise
//
// A run that stopped for any other reason (interrupted) has no final status
// yet and resolveStatus returns "".
func resolveStatus(t tally, windowClosed bool) string {
	switch {
	case t.Pending > 0 && !windowClosed:
		return ""
	case t.Targets == 0:
		return statusSuccess
	case t.PartsSent == 0:
		return statusFailed
	case t.Pending > 0:
		return statusPaused
	case t.Sent == t.Targets:
		return statusSuccess
	default:
		return statusPartial
	}
}

// final reports whether a status ends the reminder: nothing will be sent
// for it again.
func final(status string) bool {
	return status == statusSuccess || status == statusPartial || status == statusFailed
}
