package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// backend keeps the progress: the state file of one process, or Redis
// shared by several, where every write carries the fence of the account
// lock it was made under and a write of an earlier holder is refused.
type backend interface {
	// load returns the stored progress after storing the reminders of add
	// that it does not hold yet.
	load(ctx context.Context, add []reminder) (progress, error)
	// claim, for a new holder of reminder id's account lock, returns the
	// reminder's progress where the previous holder left it (nil: this
	// process's copy is the only one), and from then on refuses writes of
	// lower fences; errTakenOver if a higher fence claimed it already.
	claim(ctx context.Context, id string, fence uint64) (*reminderState, error)
	// write stores reminders, and returns the indexes of those it refused.
	write(ctx context.Context, recs []record) (refused []int, err error)
	close() error
}

// record is one reminder's progress on its way to the backend.
type record struct {
	I     int    // index in the progress
	ID    string // the reminder's id
	Data  []byte // the reminderState as JSON
	Fence uint64 // of the account lock held while it changed; 0: none
}

// errTakenOver means the backend refused a reminder's write: another
// process took the account's lock, and with it the reminder, since this
// one last held it.
var errTakenOver = errors.New("another process holds the reminder now")

// store holds the progress in memory and keeps the backend in step: a
// saver goroutine writes the reminders that changed, at most once per
// interval, so a killed program loses at most the last interval's updates
// (those parts go out again, with their idempotency keys). flush writes a
// reminder at once, before another process may take it over. Use
// openStore and Close.
type store struct {
	be    backend
	clk   clock.Clock
	every time.Duration

	writing sync.Mutex // one write at a time, so none overtakes a newer one

	mu      sync.Mutex
	p       progress
	changed map[int]bool   // reminders changed since they were last written
	fences  map[int]uint64 // the fence each reminder is written under
	lost    map[int]bool   // reminders whose write the backend refused

	dirty chan struct{} // capacity 1: a pending write request
	stop  chan struct{}
	done  chan struct{}
}

// openStore loads the progress from be, adding the reminders of add that
// are new, and starts writing changes at most once every interval on clk
// (0: as fast as the backend goes).
func openStore(ctx context.Context, be backend, add []reminder, clk clock.Clock, every time.Duration) (*store, error) {
	p, err := be.load(ctx, add)
	if err != nil {
		return nil, errors.Join(err, be.close())
	}
	s := &store{be: be, clk: clk, every: every, p: p,
		changed: map[int]bool{}, fences: map[int]uint64{}, lost: map[int]bool{},
		dirty: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.saver()
	return s, nil
}

func (s *store) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.p.Reminders)
}

// update changes reminder i under the store's lock and schedules a write.
func (s *store) update(i int, fn func(rs *reminderState)) {
	s.mu.Lock()
	fn(s.p.Reminders[i])
	s.changed[i] = true
	s.mu.Unlock()
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

// claim is called holding the account lock of reminder i, with its fence:
// it reads the reminder again from the backend, where the previous holder
// left it, and writes it under fence from now on.
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
	s.fences[i] = fence
	delete(s.lost, i)
	return nil
}

// flush writes reminder i now, with whatever else changed; it is called
// before the account lock is released, so the next holder reads it. It
// returns errTakenOver if the backend refused the write.
func (s *store) flush(ctx context.Context, i int) error {
	s.mu.Lock()
	s.changed[i] = true
	s.mu.Unlock()
	if err := s.save(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost[i] {
		return errTakenOver
	}
	return nil
}

func (s *store) saver() {
	defer close(s.done)
	ctx := context.Background() // the last write must be tried whatever ended
	for {
		select {
		case <-s.dirty:
			s.save(ctx)
		case <-s.stop:
			return
		}
		if s.every > 0 {
			t := s.clk.Timer(s.every)
			select {
			case <-t.C:
			case <-s.stop:
				t.Stop()
				return
			}
		}
	}
}

// save writes the reminders that changed. A failed write leaves them
// changed, for the next save to try again.
func (s *store) save(ctx context.Context) error {
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	var recs []record
	for i := range s.changed {
		if s.lost[i] {
			continue // not ours to write any more
		}
		rs := s.p.Reminders[i]
		b, _ := json.Marshal(rs) // strings and ints only
		recs = append(recs, record{I: i, ID: rs.Reminder.ID, Data: b, Fence: s.fences[i]})
	}
	clear(s.changed)
	s.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	refused, err := s.be.write(ctx, recs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range refused {
		s.lost[i] = true
	}
	if err != nil {
		for _, r := range recs {
			s.changed[r.I] = true
		}
		return fmt.Errorf("writing the progress: %w", err)
	}
	return nil
}

// Close stops the saver and waits for it, writes what is left to write
// and releases the backend. It must be called once.
func (s *store) Close() error {
	close(s.stop)
	<-s.done
	return errors.Join(s.save(context.Background()), s.be.close())
}
