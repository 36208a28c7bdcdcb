package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// reconcile makes the manifest agree with the page files, which are the
// truth of what the mirror holds: a file whose front matter names a
// version the manifest does not list (a crash came between the page write
// and the manifest write, or the files were written by a version of this
// program that kept the manifest only at shutdown) gets its entry; an
// entry whose file is gone is removed, and its page returned, to be
// fetched again. Files without this program's front matter are not
// pages of the mirror and are left alone. It saves the manifest if it
// changed anything.
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
		fid, version, ok := frontMatter(data)
		if !ok || fid != id {
			continue
		}
		onDisk[id] = true
		if cur, ok := s.manifest.Pages[id]; ok && cur.Version == version && cur.File == e.Name() {
			continue
		}
		synced := time.Now()
		if info, err := e.Info(); err == nil {
			synced = info.ModTime()
		}
		s.manifest.Pages[id] = entry{File: e.Name(), Version: version, Synced: synced}
		changed = true
	}
	for id := range s.manifest.Pages {
		if !onDisk[id] {
			delete(s.manifest.Pages, id)
			lost = append(lost, id)
			changed = true
		}
	}
	if changed {
		if err := s.saveLocked(time.Now()); err != nil {
			return nil, err
		}
	}
	return lost, nil
}
