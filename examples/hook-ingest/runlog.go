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
	Op    string    `json:"op"` // "start" or "end"
	Run   string    `json:"run"`
	At    time.Time `json:"at"`
	Batch *claim    `json:"batch,omitempty"` // start only: the batch sent
	Err   string    `json:"err,omitempty"`   // end only: the delivery failed
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
	return errors.Join(err, f.Close())
}

// batchRun is one processing run as read back from the log.
type batchRun struct {
	claim
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
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var runs []batchRun
	open := map[string]int{} // runs started and not yet ended
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, err
		}
		if e.Op == "start" && e.Batch != nil {
			for _, i := range open {
				runs[i].Overlapped = true
			}
			open[e.Run] = len(runs)
			runs = append(runs, batchRun{claim: *e.Batch, Start: e.At})
		} else if i, ok := open[e.Run]; ok && e.Op == "end" {
			runs[i].End, runs[i].Err = e.At, e.Err
			delete(open, e.Run)
		}
	}
	return runs, sc.Err()
}
