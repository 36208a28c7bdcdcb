package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// A queue is the durable list of pages waiting to be synced: one JSON file
// per page, written atomically before the webhook is answered, so an
// accepted change survives a crash; a second change of a queued page
// rewrites the same file. Each write gets a new sequence number, and a
// sync removes an item only if its sequence is unchanged, so a change that
// arrives during a sync keeps the page queued. It is safe for concurrent
// use within one process; the lock file keeps other processes out.
//
// It is hand-written because the tool runs on nothing but a directory and
// must lose nothing to kill -9 (a Runner keeps its state in the process,
// or in Redis or PostgreSQL): the directory is the record of what is left
// to do, and the Runner, rebuilt from it at every start, decides when.
type queue struct {
	dir   string
	locks mutex.Keyed[string] // per page: put and ack are read-modify-write

	mu  sync.Mutex
	seq uint64
}

// An item is one queued page.
type item struct {
	PageID  string    `json:"page_id"`
	Seq     uint64    `json:"seq"`
	Updates int       `json:"updates"` // webhooks coalesced into this item
	First   time.Time `json:"first"`   // when the oldest of them arrived
	Last    time.Time `json:"last"`
}

// validPageID matches the page IDs the queue accepts, which are also its
// file names: Notion's UUIDs, with or without dashes.
var validPageID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)

// openQueue opens the queue in dir, creating dir if needed, removing the
// temporary files of item writes that a killed run cut short, and
// continuing the sequence of the items left. The caller must be the only
// process using dir.
func openQueue(dir string) (*queue, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	q := &queue{dir: dir}
	_, err := removeTempFiles(dir, isItemName)
	items, lerr := q.list()
	for _, it := range items {
		q.seq = max(q.seq, it.Seq)
	}
	return q, errors.Join(err, lerr)
}

func (q *queue) path(pageID string) string { return filepath.Join(q.dir, pageID+".json") }

// isItemName reports whether name is the file name of a queue item.
func isItemName(name string) bool {
	id, ok := strings.CutSuffix(name, ".json")
	return ok && validPageID.MatchString(id)
}

// put records a change of pageID at time at, merging it into the page's
// queued item if there is one. It returns once the item is on disk.
func (q *queue) put(pageID string, at time.Time) error {
	if !validPageID.MatchString(pageID) {
		return fmt.Errorf("queue: invalid page id %q", pageID)
	}
	q.locks.Lock(pageID)
	defer q.locks.Unlock(pageID)
	it, err := q.read(pageID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		it = item{PageID: pageID, First: at}
	case err != nil:
		return err
	}
	q.mu.Lock()
	q.seq++
	it.Seq = q.seq
	q.mu.Unlock()
	it.Updates++
	it.Last = at
	data, _ := json.Marshal(it)
	return atomicfile.Write(q.path(pageID), data, 0o644)
}

// ack removes it from the queue if it was not updated since it was listed,
// and reports whether it did.
func (q *queue) ack(it item) (bool, error) {
	q.locks.Lock(it.PageID)
	defer q.locks.Unlock(it.PageID)
	if cur, err := q.read(it.PageID); err != nil || cur.Seq != it.Seq {
		return false, err
	}
	return true, atomicfile.Remove(q.path(it.PageID))
}

func (q *queue) read(pageID string) (item, error) {
	var it item
	data, err := os.ReadFile(q.path(pageID))
	if err != nil {
		return it, err
	}
	if err := json.Unmarshal(data, &it); err != nil {
		return it, fmt.Errorf("queue: %s: %w", pageID, err)
	}
	return it, nil
}

// list returns the queued items, oldest first change first.
func (q *queue) list() ([]item, error) {
	entries, err := os.ReadDir(q.dir)
	if err != nil {
		return nil, err
	}
	var items []item
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !isItemName(name) {
			continue // temporary files of a write in progress, the lock file
		}
		it, err := q.read(strings.TrimSuffix(name, ".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // acked since ReadDir
		}
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b item) int {
		return cmp.Or(a.First.Compare(b.First), strings.Compare(a.PageID, b.PageID))
	})
	return items, nil
}

// len returns the number of queued pages.
func (q *queue) len() (int, error) {
	items, err := q.list()
	return len(items), err
}
