package main

import (
	"fmt"
	"time"
)

// A result is what an action did, as -json writes it: the action, what it
// acted on, and whether it changed anything.
type result struct {
	Action string  `json:"action"`
	Queue  string  `json:"queue"`
	Key    *string `json:"key,omitempty"` // nil for an action on the whole queue
	ID     uint64  `json:"id,omitempty"`  // a redriven dead letter
	// Changed is false when the action found nothing to do, and pacer
	// exits 1.
	Changed bool `json:"changed"`
	// Moved counts the values that drop moved to the dead letters.
	Moved *int `json:"moved,omitempty"`
	// Removed counts the dead letters that purge removed, dropped before
	// Before.
	Removed *int      `json:"removed,omitempty"`
	Before  time.Time `json:"before,omitzero"`
}

// report writes what an action did: r for -json, else done when it
// changed something. When it did not, it returns a noChange that says
// unchanged, so that pacer exits 1.
func (c *call) report(r result, done, unchanged string) error {
	if c.json {
		if err := c.writeJSON(r); err != nil {
			return err
		}
	} else if r.Changed {
		if _, err := fmt.Fprintln(c.out, done); err != nil {
			return err
		}
	}
	if !r.Changed {
		return noChange{unchanged}
	}
	return nil
}
