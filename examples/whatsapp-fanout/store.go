package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// backend keeps the progress: the state file of one process, or Redis
// shared by several, fenced.
type backend interface {
	// load stores the reminders of add that it does not hold yet and
	// returns the progress.
	load(ctx context.Context, add []reminder) (progress, error)
	// claim, for a new holder of reminder id's account lock, returns the
	// reminder's progress as the previous holder left it (nil: this
	// process's copy is the only one), and from then on refuses writes of
	// lower fences; errTakenOver if a higher fence claimed it already.
	claim(ctx context.Context, id string, fence uint64) (*reminderState, error)
	// write stores the reminders that changed (the state file: all), and
	// returns the indexes of those it refused.
	write(ctx context.Context, recs []record) (refused []int, err error)
	close() error
}

// record is one reminder's progress on its way to the backend.
type record struct {
	I       int    // index in the progress
	ID      string // the reminder's id
	Data    []byte // the reminderState as JSON
	Fence   uint64 // of the account lock held while it changed; 0: none
	Changed bool   // since it was last written
}

// errTakenOver means another process took the reminder's account lock,
// and with it the reminder, since this one last held it.
var errTakenOver = errors.New("another process holds the reminder now")

// store holds the progress in memory; a saver goroutine writes what
// changed at most once per interval, so a killed program loses at most the
// last interval's updates (whose parts go out again, with their
// idempotency keys). Use openStore and Close.
type store struct {
	be      backend
	writing sync.Mutex // one write at a time, so none overtakes a newer one
	mu      sync.Mutex // guards p
	p       progress
	dirty   chan struct{} // capacity 1: a pending write request
	stop    context.CancelFunc
	done    chan struct{}
}

// openStore loads the progress from be, with the reminders of add, and
// writes changes at most once every interval on clk (0: at once).
func openStore(ctx context.Context, be backend, add []reminder, clk clock.Clock, every time.Duration) (*store, error) {
	p, err := be.load(ctx, add)
	if err != nil {
		return nil, errors.Join(err, be.close())
	}
	sctx, stop := context.WithCancel(context.Background())
	s := &store{be: be, p: p, dirty: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.dirty:
				s.save(context.WithoutCancel(sctx)) // the last write must be tried whatever ended
			case <-sctx.Done():
				return
			}
			if every > 0 && sleepCtx(sctx, clk, every) != nil {
				return
			}
		}
	}()
	return s, nil
}

// update changes reminder i under the store's lock and schedules a write.
func (s *store) update(i int, fn func(rs *reminderState)) {
	s.view(i, func(rs *reminderState) {
		fn(rs)
		rs.changed = true
	})
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// view reads reminder i under the store's lock.
func (s *store) view(i int, fn func(rs *reminderState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.p.Reminders[i])
}

// claim, called holding reminder i's account lock, reads the reminder as
// the previous holder left it, and writes it under fence from now on.
func (s *store) claim(ctx context.Context, i int, fence uint64) error {
	var id string
	s.view(i, func(rs *reminderState) { id = rs.Reminder.ID })
	rs, err := s.be.claim(ctx, id, fence)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rs != nil {
		s.p.Reminders[i] = rs
	}
	s.p.Reminders[i].fence = fence
	return nil
}

// flush writes reminder i now, before its account lock is released; it
// returns errTakenOver if the backend refused the write.
func (s *store) flush(ctx context.Context, i int) error {
	s.view(i, func(rs *reminderState) { rs.changed = true })
	refused, err := s.save(ctx)
	if err == nil && slices.Contains(refused, i) {
		err = errTakenOver
	}
	return err
}

// save writes the progress if a reminder changed, and returns the indexes
// of those the backend refused (taken over: it will refuse them again). A
// failed write leaves them changed, for the next save.
func (s *store) save(ctx context.Context) (refused []int, err error) {
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	var recs []record
	if slices.ContainsFunc(s.p.Reminders, func(rs *reminderState) bool { return rs.changed }) {
		for i, rs := range s.p.Reminders {
			b, _ := json.Marshal(rs) // strings and ints only
			recs = append(recs, record{i, rs.Reminder.ID, b, rs.fence, rs.changed})
			rs.changed = false
		}
	}
	s.mu.Unlock()
	if len(recs) == 0 {
		return nil, nil
	}
	if refused, err = s.be.write(ctx, recs); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range recs {
			s.p.Reminders[r.I].changed = r.Changed
		}
		return refused, fmt.Errorf("writing the progress: %w", err)
	}
	return refused, nil
}

// Close stops the saver, writes what is left and releases the backend.
func (s *store) Close() error {
	s.stop()
	<-s.done
	_, err := s.save(context.Background())
	return errors.Join(err, s.be.close())
}

// fileBackend keeps the progress in a state file, for one process: it
// holds an flock(2) on path+".lock" from openStateFile to close, and each
// write replaces the whole file atomically (atomicfile), so the file always
// holds a complete state.
type fileBackend struct {
	path   string
	unlock func() error
}

// openStateFile locks the state file at path, waiting a second for a
// program that is just finishing, and removes stale temporary files.
func openStateFile(ctx context.Context, path string) (*fileBackend, error) {
	lctx, cancel := context.WithTimeout(ctx, time.Second)
	unlock, err := mutex.LockFile(lctx, path+".lock")
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("state file %s is in use by another process", path)
	} else if err != nil {
		return nil, err
	}
	if err := removeStaleTemps(path); err != nil {
		return nil, errors.Join(err, unlock())
	}
	return &fileBackend{path: path, unlock: unlock}, nil
}

func (b *fileBackend) load(_ context.Context, add []reminder) (progress, error) {
	p, err := loadProgress(b.path)
	if err == nil && p.add(add) > 0 {
		err = b.save(p) // stored before anything is sent for them
	}
	return p, err
}

// loadProgress reads the state file at path; none is an empty progress.
func loadProgress(path string) (p progress, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	} else if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("state file %s: %w", path, err)
	}
	return p, nil
}

// claim returns nil: this process's copy is the only one.
func (b *fileBackend) claim(context.Context, string, uint64) (*reminderState, error) {
	return nil, nil
}

func (b *fileBackend) write(_ context.Context, recs []record) ([]int, error) {
	all := make([]json.RawMessage, len(recs))
	for i, r := range recs {
		all[i] = r.Data
	}
	return nil, b.save(struct {
		Reminders []json.RawMessage `json:"reminders"`
	}{all})
}

func (b *fileBackend) save(progress any) error {
	out, err := json.MarshalIndent(progress, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Write(b.path, out, 0o600)
}

func (b *fileBackend) close() error { return b.unlock() }

// removeStaleTemps removes the temporary files of the state file at path
// that a program killed mid-write left behind, named as atomicfile.Write
// names them (".tmp-NAME-DIGITS"), and nothing else. The caller holds the
// state file's lock: a temporary file of a live writer is not stale.
func removeStaleTemps(path string) error {
	dir, prefix := filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
