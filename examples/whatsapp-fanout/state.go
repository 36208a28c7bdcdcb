package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// progress is the content of the state file: every reminder started so far
// with the status of each of its groups.
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

// store holds the progress in memory and keeps the state file in step with
// it: a saver goroutine writes the file whenever something changed, at most
// once per interval, so a killed program loses at most the updates of the
// last interval (those parts are sent again when it starts again). Each
// write is atomic (temporary file, fsync, rename): the file always holds a
// complete state. Use openStore and Close.
type store struct {
	path   string
	clk    clock.Clock
	every  time.Duration
	unlock func() error // the state file's lock

	mu    sync.Mutex
	p     progress
	saved int // writes done

	dirty chan struct{} // capacity 1: a pending write request
	stop  chan struct{}
	done  chan struct{}
	err   error // first write error, reported by Close
}

// openStore takes the state file's lock, removes the temporary files that
// a killed program's writes left behind, loads the state file at path, if
// it exists, and starts saving changes at most once every interval on clk
// (0: as fast as the disk goes). The lock, an flock(2) on path+".lock", is
// held until Close: one process at a time keeps a state file, and another
// that tries gets an error.
func openStore(ctx context.Context, path string, clk clock.Clock, every time.Duration) (*store, error) {
	lctx, cancel := context.WithTimeout(ctx, lockWait)
	unlock, err := mutex.LockFile(lctx, path+".lock")
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("state file %s is in use by another process", path)
	} else if err != nil {
		return nil, err
	}
	p, err := loadProgress(path)
	if err == nil {
		err = removeStaleTemps(path)
	}
	if err != nil {
		return nil, errors.Join(err, unlock())
	}
	s := &store{path: path, clk: clk, every: every, p: p, unlock: unlock,
		dirty: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.saver()
	return s, nil
}

// lockWait is how long openStore waits for the state file's lock: long
// enough for a program that is just finishing.
const lockWait = time.Second

// loadProgress reads the state file at path; a missing file is an empty
// progress.
func loadProgress(path string) (progress, error) {
	var p progress
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil
	case err != nil:
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("state file %s: %w", path, err)
	}
	return p, nil
}

// update changes the progress under the store's lock and schedules a write.
func (s *store) update(fn func(p *progress)) {
	s.mu.Lock()
	fn(&s.p)
	s.mu.Unlock()
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// view reads the progress under the store's lock.
func (s *store) view(fn func(p *progress)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.p)
}

func (s *store) saver() {
	defer close(s.done)
	for {
		select {
		case <-s.dirty:
			s.save()
		case <-s.stop:
			s.save()
			return
		}
		if s.every > 0 {
			t := s.clk.Timer(s.every)
			select {
			case <-t.C:
			case <-s.stop:
				t.Stop()
				s.save()
				return
			}
		}
	}
}

func (s *store) save() {
	s.mu.Lock()
	b, err := json.MarshalIndent(&s.p, "", " ")
	s.saved++
	s.mu.Unlock()
	if err == nil {
		err = atomicfile.Write(s.path, b, 0o600)
	}
	if err != nil && s.err == nil {
		s.err = err
	}
}

// Close writes the final state, stops the saver and waits for it, and
// releases the state file's lock. It returns the first write error. It must
// be called once.
func (s *store) Close() error {
	close(s.stop)
	<-s.done
	return errors.Join(s.err, s.unlock())
}
