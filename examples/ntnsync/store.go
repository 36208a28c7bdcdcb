package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// A store is the local mirror: one Markdown file per page in its directory,
// and a manifest, written by commit, that records which version of each page
// the files hold. Page files are written under a per-page lock, each one
// atomically; commit excludes every write so the manifest it writes is a
// consistent picture. It is safe for concurrent use.
type store struct {
	dir   string
	locks mutex.Keyed[string] // per page: one writer of a page file at a time
	// commitMu is held shared by page writes and exclusively by commit.
	commitMu sync.RWMutex

	mu       sync.Mutex
	manifest manifest
	written  int // page files written since open
}

// A manifest is what a commit records.
type manifest struct {
	Committed time.Time        `json:"committed"`
	Commits   int              `json:"commits"`
	Pages     map[string]entry `json:"pages"`
}

// An entry is one page of the manifest.
type entry struct {
	File    string    `json:"file"`
	Version int       `json:"version"`
	Synced  time.Time `json:"synced"`
}

const manifestName = ".ntnsync-manifest.json"

// openStore opens the mirror in dir, creating dir if needed and reading the
// manifest of the last commit, if any.
func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &store{dir: dir, manifest: manifest{Pages: make(map[string]entry)}}
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &s.manifest); err != nil {
		return nil, err
	}
	if s.manifest.Pages == nil {
		s.manifest.Pages = make(map[string]entry)
	}
	return s, nil
}

// write stores the Markdown md of p unless that version of p or a newer one
// is already stored, and reports whether it wrote.
func (s *store) write(p page, md []byte, now time.Time) (bool, error) {
	s.commitMu.RLock()
	defer s.commitMu.RUnlock()
	s.locks.Lock(p.ID)
	defer s.locks.Unlock(p.ID)

	s.mu.Lock()
	old, ok := s.manifest.Pages[p.ID]
	s.mu.Unlock()
	if ok && old.Version >= p.Version {
		return false, nil // already there, or newer
	}
	name := p.ID + ".md"
	if err := atomicfile.Write(filepath.Join(s.dir, name), md, 0o644); err != nil {
		return false, err
	}
	s.mu.Lock()
	s.manifest.Pages[p.ID] = entry{File: name, Version: p.Version, Synced: now}
	s.written++
	s.mu.Unlock()
	return true, nil
}

// commit writes the manifest atomically, after every page write in progress
// has finished and before any new one starts.
func (s *store) commit(now time.Time) (manifest, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	s.manifest.Committed = now
	s.manifest.Commits++
	m := s.manifest
	data, err := json.MarshalIndent(m, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return m, err
	}
	return m, atomicfile.Write(filepath.Join(s.dir, manifestName), data, 0o644)
}

// filesWritten returns the number of page files written since open.
func (s *store) filesWritten() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}
