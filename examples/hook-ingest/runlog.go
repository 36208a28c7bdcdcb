package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"
)

// logEntry is one line of a session's run log: the start or the end of a
// processing run. Entries are appended under the state lock, so the lines of
// one session are in the order things happened.
type logEntry struct {
	Op     string    `json:"op"` // "start" or "end"
	Run    string    `json:"run"`
	PID    int       `json:"pid"`
	At     time.Time `json:"at"`
	Key    string    `json:"key,omitempty"`    // start only: the batch's idempotency key
	Fence  uint64    `json:"fence,omitempty"`  // start only: the attempt's fence
	Reason string    `json:"reason,omitempty"` // start only
	Events []event   `json:"events,omitempty"` // start only
	Err    string    `json:"err,omitempty"`    // end only: the delivery failed
}

func appendLog(path string, e logEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// batchRun is one processing run as reconstructed from the log.
type batchRun struct {
	ID         string
	PID        int
	Key        string
	Fence      uint64
	Reason     string
	Events     []event
	Start, End time.Time // End is zero if the run never finished
	Err        string
	// Overlapped reports whether another run started between this run's
	// start and end lines. The log is written under the state lock, so
	// its line order is the order of events, whatever the clocks say.
	Overlapped bool
}

// finished reports whether the run ended, successfully or not. A run that
// never finished belongs to a process that died while processing.
func (r batchRun) finished() bool { return !r.End.IsZero() }

// readRuns returns the runs of the log at path in start order.
func readRuns(path string) ([]batchRun, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var runs []batchRun
	index := map[string]int{}
	open := map[int]bool{} // runs started and not yet ended
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, err
		}
		switch e.Op {
		case "start":
			for i := range open {
				runs[i].Overlapped = true
			}
			index[e.Run] = len(runs)
			open[len(runs)] = true
			runs = append(runs, batchRun{ID: e.Run, PID: e.PID, Key: e.Key, Fence: e.Fence, Reason: e.Reason, Events: e.Events, Start: e.At})
		case "end":
			if i, ok := index[e.Run]; ok {
				runs[i].End, runs[i].Err = e.At, e.Err
				delete(open, i)
			}
		}
	}
	return runs, sc.Err()
}
