package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// A store is the local mirror: one Markdown file per page in its directory,
// and a manifest that records which version of each page the files hold.
// Each page write replaces the page file atomically and then the manifest
// atomically, so the manifest on disk is never behind a write that
// returned, and a crash between the two leaves a page file newer than its
// manifest entry, which openStore repairs. Page files are written under a
// per-page lock; manifest writes are serialised, each one a complete
// picture. It is safe for concurrent use.
//
// Rewriting the whole manifest costs one file write per page synced, in
// proportion to the number of pages: fine for the thousands of pages of a
// workspace, not for millions.
type store struct {
	dir   string
	locks mutex.Keyed[string] // per page: one writer of a page file at a time

	// mu guards manifest and written, and is held while the manifest
	// file is replaced, so that the last write on disk is the latest
	// picture.
	mu       sync.Mutex
	manifest manifest
	written  int // page files written since open
}

// A manifest is what the mirror holds.
type manifest struct {
	Updated time.Time        `json:"updated"`
	Pages   map[string]entry `json:"pages"`
}

// An entry is one page of the manifest.
type entry struct {
	File    string    `json:"file"`
	Version int       `json:"version"`
	Synced  time.Time `json:"synced"`
}

const manifestName = ".ntnsync-manifest.json"

// openStore opens the mirror in dir, creating dir if needed. It removes
// the temporary files of writes a killed run cut short, reads the
// manifest, and makes it agree with the page files (see reconcile). It
// returns the pages whose file is gone although the manifest listed them,
// to be fetched again.
func openStore(dir string) (*store, []string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if _, err := removeTempFiles(dir, isMirrorName); err != nil {
		return nil, nil, err
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	s := &store{dir: dir, manifest: m}
	lost, err := s.reconcile()
	if err != nil {
		return nil, nil, err
	}
	return s, lost, nil
}

// readManifest reads the manifest file in dir; a missing file is an empty
// manifest.
func readManifest(dir string) (manifest, error) {
	m := manifest{Pages: make(map[string]entry)}
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w", manifestName, err)
	}
	if m.Pages == nil {
		m.Pages = make(map[string]entry)
	}
	return m, nil
}

// isMirrorName reports whether name is the manifest or a page file.
func isMirrorName(name string) bool {
	id, ok := strings.CutSuffix(name, ".md")
	return name == manifestName || ok && validPageID.MatchString(id)
}

// write stores the Markdown md of p unless that version of p or a newer one
// is already stored, and reports whether it wrote. Once it returned nil,
// the page file and the manifest on disk both hold p's version or a newer
// one.
func (s *store) write(p page, md []byte, now time.Time) (bool, error) {
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
	defer s.mu.Unlock()
	s.manifest.Pages[p.ID] = entry{File: name, Version: p.Version, Synced: now}
	if err := s.saveLocked(now); err != nil {
		// The manifest on disk does not list this version: neither may
		// the one in memory, or a retry would skip the write.
		if ok {
			s.manifest.Pages[p.ID] = old
		} else {
			delete(s.manifest.Pages, p.ID)
		}
		return false, err
	}
	s.written++
	return true, nil
}

// saveLocked replaces the manifest file with the manifest in memory. The
// caller holds s.mu.
func (s *store) saveLocked(now time.Time) error {
	s.manifest.Updated = now
	data, err := json.MarshalIndent(s.manifest, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(s.dir, manifestName), data, 0o644)
}

// snapshot returns a copy of the manifest.
func (s *store) snapshot() manifest {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.manifest
	m.Pages = make(map[string]entry, len(s.manifest.Pages))
	for id, e := range s.manifest.Pages {
		m.Pages[id] = e
	}
	return m
}

// filesWritten returns the number of page files written since open.
func (s *store) filesWritten() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}
