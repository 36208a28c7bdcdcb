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
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/atomicfile"
	"github.com/pacerkit/pacer/mutex"
)

// A store is the local mirror: one Markdown file per page, and a manifest
// of the version each file holds. A page write replaces the page file
// atomically, then the manifest, so the manifest on disk is never behind a
// write that returned; a crash between the two leaves a page file newer
// than its entry, which openStore repairs. It is safe for concurrent use.
type store struct {
	dir   string
	locks mutex.Keyed[string] // per page: one writer of a page file at a time

	written atomic.Int64 // page files written since open

	// mu guards manifest, and is held while the manifest file is
	// replaced, so that the last one on disk is the latest.
	mu       sync.Mutex
	manifest manifest
}

// A manifest lists the version each page file holds.
type manifest struct {
	Updated time.Time        `json:"updated"`
	Pages   map[string]entry `json:"pages"`
}

type entry struct {
	File    string    `json:"file"`
	Version int       `json:"version"`
	Synced  time.Time `json:"synced"`
}

const manifestName = ".ntnsync-manifest.json"

// openStore opens the mirror in dir, removing the temporary files of writes
// a killed run cut short, and reconciles it: it returns the pages whose
// file is gone, to be fetched again.
func openStore(dir string) (*store, []string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if err := removeTempFiles(dir, isMirrorName); err != nil {
		return nil, nil, err
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	s := &store{dir: dir, manifest: m}
	lost, err := s.reconcile()
	return s, lost, err
}

// readManifest reads the manifest file in dir; none is an empty manifest.
func readManifest(dir string) (manifest, error) {
	var m manifest
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err == nil {
		if err = json.Unmarshal(data, &m); err != nil {
			err = fmt.Errorf("%s: %w", manifestName, err)
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if m.Pages == nil {
		m.Pages = make(map[string]entry)
	}
	return m, err
}

func isMirrorName(name string) bool {
	id, ok := strings.CutSuffix(name, ".md")
	return name == manifestName || ok && validPageID.MatchString(id)
}

// write stores the Markdown md of p unless that version of p or a newer one
// is stored, and reports whether it wrote. Once it returned nil, the page
// file and the manifest on disk hold p's version or a newer one.
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
	s.written.Add(1)
	return true, nil
}

// saveLocked replaces the manifest file. The caller holds s.mu.
func (s *store) saveLocked(now time.Time) error {
	s.manifest.Updated = now
	data, _ := json.MarshalIndent(s.manifest, "", "  ") // strings, ints and times
	return atomicfile.Write(filepath.Join(s.dir, manifestName), data, 0o644)
}

// reconcile makes the manifest agree with the page files, the truth: a file
// whose front matter names a version the manifest does not list (a crash
// came between the two writes) gets its entry; an entry whose file is gone
// is removed, and its page returned to be fetched again. Files without
// this program's front matter are left alone.
func (s *store) reconcile() (lost []string, err error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	onDisk := make(map[string]bool)
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !e.Type().IsRegular() || !validPageID.MatchString(id) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if fid, version, ok := frontMatter(data); ok && fid == id {
			onDisk[id] = true
			if cur, ok := s.manifest.Pages[id]; !ok || cur.Version != version || cur.File != e.Name() {
				synced := time.Now()
				if info, err := e.Info(); err == nil {
					synced = info.ModTime()
				}
				s.manifest.Pages[id], changed = entry{File: e.Name(), Version: version, Synced: synced}, true
			}
		}
	}
	for id := range s.manifest.Pages {
		if !onDisk[id] {
			delete(s.manifest.Pages, id)
			lost, changed = append(lost, id), true
		}
	}
	if changed {
		err = s.saveLocked(time.Now())
	}
	return lost, err
}
