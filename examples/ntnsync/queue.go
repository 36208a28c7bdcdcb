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
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// A queue is the durable list of pages waiting to be synced: one JSON file
// per page, written atomically before the webhook is answered; a second
// change of a queued page rewrites it. Each write gets a new sequence
// number, and a sync removes an item only if its sequence is unchanged, so
// a change that arrives during a sync keeps the page queued. It is safe
// for concurrent use; the lock file keeps other processes out.
type queue struct {
	dir   string
	locks mutex.Keyed[string] // per page: put and ack are read-modify-write
	seq   atomic.Uint64
}

type item struct {
	PageID  string    `json:"page_id"`
	Seq     uint64    `json:"seq"`
	Updates int       `json:"updates"` // webhooks coalesced into this item
	First   time.Time `json:"first"`   // when the oldest of them arrived
	Last    time.Time `json:"last"`
}

// lockName is the lock file that keeps a second process off the queue
// directory (lock.go): the queue's read-modify-write of an item and the
// removal of temporary files at start are only safe for one process.
const lockName = ".lock"

// validPageID matches the page IDs the queue accepts, which are also its
// file names: Notion's UUIDs, with or without dashes.
var validPageID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)

// openQueue opens the queue in dir, removing the temporary files of writes
// a killed run cut short. The caller must be the only process using dir.
func openQueue(dir string) (*queue, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	q := &queue{dir: dir}
	err := removeTempFiles(dir, isItemName)
	items, lerr := q.list()
	for _, it := range items {
		q.seq.Store(max(q.seq.Load(), it.Seq))
	}
	return q, errors.Join(err, lerr)
}

func (q *queue) path(pageID string) string { return filepath.Join(q.dir, pageID+".json") }

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
	if errors.Is(err, fs.ErrNotExist) {
		it = item{PageID: pageID, First: at}
	} else if err != nil {
		return err
	}
	it.Seq, it.Last = q.seq.Add(1), at
	it.Updates++
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
	if err == nil {
		if err = json.Unmarshal(data, &it); err != nil {
			err = fmt.Errorf("queue: %s: %w", pageID, err)
		}
	}
	return it, err
}

// list returns the queued items, oldest first change first.
func (q *queue) list() ([]item, error) {
	entries, err := os.ReadDir(q.dir)
	if err != nil {
		return nil, err
	}
	var items []item
	for _, e := range entries {
		if e.IsDir() || !isItemName(e.Name()) {
			continue // temporary files of a write in progress, the lock file
		}
		it, err := q.read(strings.TrimSuffix(e.Name(), ".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // acked since ReadDir
		} else if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b item) int {
		return cmp.Or(a.First.Compare(b.First), strings.Compare(a.PageID, b.PageID))
	})
	return items, nil
}

func (q *queue) len() (int, error) {
	items, err := q.list()
	return len(items), err
}

// tempName matches the temporary files of atomicfile.Write (".tmp-", the
// target's name, "-" and digits), which a process killed mid-write leaves.
var tempName = regexp.MustCompile(`^\.tmp-(.+)-[0-9]+$`)

// removeTempFiles removes from dir the temporary files of the targets ours
// says belong to the program, and nothing else. It must only run while no
// other process writes in dir, which the queue's lock file ensures.
func removeTempFiles(dir string, ours func(target string) bool) error {
	entries, err := os.ReadDir(dir)
	for _, e := range entries {
		if m := tempName.FindStringSubmatch(e.Name()); m != nil && e.Type().IsRegular() && ours(m[1]) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return err
}
