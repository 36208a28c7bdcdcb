package main

import (
	"fmt"
	"io"
	"strings"
)

// print writes one line per reminder: how far it got and why it stopped.
func (r runReport) print(w io.Writer) {
	fmt.Fprintf(w, "run at %s\n", r.Start.UTC().Format("Mon 02 Jan 15:04:05 MST"))
	for _, x := range r.Results {
		t := x.Tally
		line := fmt.Sprintf("  %-12s %-16s %12s delivered  %-11s", x.Account, x.ID, fmt.Sprintf("%d of %d", t.Sent, t.Targets), x.Status)
		var notes []string
		if x.Already {
			notes = append(notes, "nothing to do")
		} else {
			notes = append(notes, fmt.Sprintf("%d sent now, %d attempts, %d retries, media prepared %d",
				x.SentNow, x.Attempts, x.Retries, x.Media))
		}
		if x.Duplicates > 0 {
			notes = append(notes, fmt.Sprintf("duplicates suppressed by the gateway: %d", x.Duplicates))
		}
		if t.Failed+t.Skipped > 0 {
			notes = append(notes, fmt.Sprintf("%d failed, %d skipped", t.Failed, t.Skipped))
		}
		if x.Err != nil {
			notes = append(notes, "stopped: "+x.Err.Error())
		}
		if x.Closed {
			notes = append(notes, "window "+x.Window+" closed")
		}
		if !x.NextOpen.IsZero() {
			notes = append(notes, "opens again "+x.NextOpen.Format("Mon 15:04 MST"))
		}
		fmt.Fprintln(w, line+"  "+strings.Join(notes, "; "))
	}
}
