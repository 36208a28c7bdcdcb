package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

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
	if _, err := time.LoadLocation(r.Zone); err != nil {
		return fmt.Errorf("reminder %s: %w", r.ID, err)
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

// demoReminders returns the demo's two reminders: one per account, each to
// n groups, with a text and a shared flyer. The windows are in different
// zones but close at the same instant (17:00 UTC in winter).
func demoReminders(n int) []reminder {
	groups := func(prefix string) []string {
		g := make([]string, n)
		for i := range g {
			g[i] = fmt.Sprintf("%s-group-%04d", prefix, i+1)
		}
		return g
	}
	parts := []part{
		{Text: "Reminder: the neighbourhood clean-up is on Saturday at 10:00."},
		{Media: "https://example.com/flyers/clean-up.jpg", Text: "The route"},
	}
	return []reminder{
		{ID: "berlin-cleanup", Account: "acct-berlin", Zone: "Europe/Berlin", Window: "06:00-18:00", Parts: parts, Groups: groups("ber")},
		{ID: "london-cleanup", Account: "acct-london", Zone: "Europe/London", Window: "05:00-17:00", Parts: parts, Groups: groups("lon")},
	}
}
