package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// fileBackend keeps the progress in a state file, for one process: it
// holds the file's lock, an flock(2) on path+".lock", from openStateFile
// to close, so another process on the same file gets an error. Each write
// replaces the whole file atomically (temporary file, fsync, rename), so the
// file always holds a complete state. It is used by one store, whose
// writes are serial.
type fileBackend struct {
	path   string
	unlock func() error
	all    []json.RawMessage // every reminder, as last written
}

// openStateFile takes the lock of the state file at path and removes the
// temporary files that a killed program's writes left behind.
func openStateFile(ctx context.Context, path string) (*fileBackend, error) {
	lctx, cancel := context.WithTimeout(ctx, lockWait)
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

// lockWait is how long openStateFile waits for the state file's lock:
// long enough for a program that is just finishing.
const lockWait = time.Second

func (b *fileBackend) load(_ context.Context, add []reminder) (progress, error) {
	p, err := loadProgress(b.path)
	if err != nil {
		return p, err
	}
	added := p.add(add)
	b.all = make([]json.RawMessage, len(p.Reminders))
	for i, rs := range p.Reminders {
		if b.all[i], err = json.Marshal(rs); err != nil {
			return p, err
		}
	}
	if added > 0 {
		// Stored before anything is sent for them.
		err = b.save()
	}
	return p, err
}

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

// claim returns nil: this process's copy is the only one.
func (b *fileBackend) claim(context.Context, string, uint64) (*reminderState, error) {
	return nil, nil
}

func (b *fileBackend) write(_ context.Context, recs []record) ([]int, error) {
	for _, r := range recs {
		b.all[r.I] = r.Data
	}
	return nil, b.save()
}

func (b *fileBackend) save() error {
	compact, err := json.Marshal(struct {
		Reminders []json.RawMessage `json:"reminders"`
	}{b.all})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", " "); err != nil {
		return err
	}
	return atomicfile.Write(b.path, out.Bytes(), 0o600)
}

func (b *fileBackend) close() error { return b.unlock() }

// removeStaleTemps removes the temporary files that writes of the state
// file at path left behind when the program was killed mid-write. They are
// named as atomicfile.Write names them, ".tmp-" + the file's name + "-" +
// digits, in the file's directory; nothing else is touched. The caller must
// hold the state file's lock: a temporary file of a live writer is not
// stale.
func removeStaleTemps(path string) error {
	dir, prefix := filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
