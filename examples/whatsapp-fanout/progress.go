package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer/window"
)

// reminder is one message to send from one account to many groups.
type reminder struct {
	ID      string   `json:"id"`
	Account string   `json:"account"`
	Zone    string   `json:"zone"`   // IANA time zone of the delivery window
	Window  string   `json:"window"` // "HH:MM-HH:MM", optionally with days: "Mon-Fri 09:00-17:00"
	Parts   []part   `json:"parts"`  // sent in this order to every group
	Groups  []string `json:"groups,omitempty"`
}

// part is one message of a reminder: a text, or a media item with a caption.
type part struct {
	Text  string `json:"text,omitempty"`
	Media string `json:"media,omitempty"` // a media item's source; prepared once per run
}

// schedule returns the reminder's delivery window, read by clk.
func (r reminder) schedule(clk clock.Clock) (window.Schedule, error) {
	s, err := window.Parse(r.Window + " " + r.Zone)
	if err != nil {
		return window.Schedule{}, fmt.Errorf("reminder %s: %w", r.ID, err)
	}
	return s.WithClock(clk), nil
}

// loadReminders reads a JSON array of reminders from path.
func loadReminders(path string) ([]reminder, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []reminder
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range rs {
		_, err := r.schedule(nil)
		switch {
		case r.ID == "":
			return nil, fmt.Errorf("reminder without id")
		case r.Account == "":
			return nil, fmt.Errorf("reminder %s: no account", r.ID)
		case len(r.Parts) == 0:
			return nil, fmt.Errorf("reminder %s: no parts", r.ID)
		case err != nil:
			return nil, err
		}
	}
	return rs, nil
}

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
	Groups []groupState `json:"groups"`

	// Not stored: whether this process changed it since its store last
	// wrote it, and the fence of the account lock it is written under.
	changed bool
	fence   uint64
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
	return rs.tallyBy(func(g groupState) int { return g.Parts })
}

// tallyBy counts rs's groups with parts(g) the parts group g received: sent
// if all of them, otherwise failed, skipped or pending by its status.
func (rs *reminderState) tallyBy(parts func(groupState) int) tally {
	t := tally{Targets: len(rs.Groups)}
	for _, g := range rs.Groups {
		n := parts(g)
		t.PartsSent += n
		switch {
		case n == len(rs.Reminder.Parts):
			t.Sent++
		case g.Status == groupFailed:
			t.Failed++
		case g.Status == groupSkipped:
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
func (p *progress) add(rs []reminder) (n int) {
	for _, r := range rs {
		if !slices.ContainsFunc(p.Reminders, func(s *reminderState) bool { return s.Reminder.ID == r.ID }) {
			p.Reminders = append(p.Reminders, newReminderState(r))
			n++
		}
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
	Targets, Sent, Failed, Skipped, Pending, PartsSent int
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
