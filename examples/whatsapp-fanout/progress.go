package main

// progress is every reminder started so far with the status of each of its
// groups: the content of the state file.
type progress struct {
	Reminders []*reminderState `json:"reminders"`
}

// reminderState is one reminder's progress.
type reminderState struct {
	Reminder reminder `json:"reminder"`
	// Status is "running" while a run may still send, then one of the
	// final statuses or "paused".
	Status string       `json:"status"`
	Runs   int          `json:"runs"`
	Groups []groupState `json:"groups"`
}

const statusRunning = "running"

// groupState is one target group's progress.
type groupState struct {
	ID     string `json:"id"`
	Status string `json:"status"`          // pending, sent, failed, skipped
	Parts  int    `json:"parts,omitempty"` // parts sent so far, in order
	Err    string `json:"err,omitempty"`
}

func (rs *reminderState) tally() tally {
	t := tally{Targets: len(rs.Groups)}
	for _, g := range rs.Groups {
		t.PartsSent += g.Parts
		switch g.Status {
		case groupSent:
			t.Sent++
		case groupFailed:
			t.Failed++
		case groupSkipped:
			t.Skipped++
		default:
			t.Pending++
		}
	}
	return t
}

// newReminderState is the progress of a reminder not started yet: every
// group pending.
func newReminderState(r reminder) *reminderState {
	s := &reminderState{Reminder: r, Groups: make([]groupState, len(r.Groups))}
	for j, g := range r.Groups {
		s.Groups[j] = groupState{ID: g, Status: groupPending}
	}
	s.Reminder.Groups = nil // listed once, in s.Groups
	return s
}

// add appends the reminders not in the progress yet, all groups pending,
// and returns how many it added.
func (p *progress) add(rs []reminder) int {
	known := map[string]bool{}
	for _, r := range p.Reminders {
		known[r.Reminder.ID] = true
	}
	n := 0
	for _, r := range rs {
		if known[r.ID] {
			continue
		}
		known[r.ID] = true
		p.Reminders = append(p.Reminders, newReminderState(r))
		n++
	}
	return n
}

// Final statuses of a reminder's fan-out (README.md).
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

// resolveStatus applies the rules of README.md to the tally of a run that
// has stopped: windowClosed says whether it stopped because the
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
