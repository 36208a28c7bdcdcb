package main

import (
	"encoding/json"
	"fmt"
	"os"

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

func (r reminder) validate() error {
	switch {
	case r.ID == "":
		return fmt.Errorf("reminder without id")
	case r.Account == "":
		return fmt.Errorf("reminder %s: no account", r.ID)
	case len(r.Parts) == 0:
		return fmt.Errorf("reminder %s: no parts", r.ID)
	}
	_, err := r.schedule(nil)
	return err
}

// loadReminders reads a JSON array of reminders from path, filling in the
// default zone and window where a reminder names none.
func loadReminders(path, zone, win string) ([]reminder, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []reminder
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range rs {
		if rs[i].Zone == "" {
			rs[i].Zone = zone
		}
		if rs[i].Window == "" {
			rs[i].Window = win
		}
		if err := rs[i].validate(); err != nil {
			return nil, err
		}
	}
	return rs, nil
}
