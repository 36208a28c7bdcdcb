package main

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStoreWritesTheManifestWithEachPage(t *testing.T) {
	dir := t.TempDir()
	st, lost, err := openStore(dir)
	require.NoError(t, err)
	require.Empty(t, lost)
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	wrote, err := st.write(page{ID: "p", Version: 3}, markdown(page{ID: "p", Version: 3}), now)
	require.NoError(t, err)
	require.True(t, wrote)
	m, err := readManifest(dir)
	require.NoError(t, err)
	require.Equal(t, map[string]entry{"p": {File: "p.md", Version: 3, Synced: now}}, m.Pages, "on disk as soon as write returned")

	wrote, err = st.write(page{ID: "p", Version: 2}, []byte("v2"), now)
	require.NoError(t, err)
	require.False(t, wrote, "an older fetch never overwrites a newer file")
	wrote, err = st.write(page{ID: "p", Version: 3}, []byte("v3 again"), now)
	require.NoError(t, err)
	require.False(t, wrote, "the same version is not written twice")

	st2, lost, err := openStore(dir)
	require.NoError(t, err)
	require.Empty(t, lost)
	require.Equal(t, 3, st2.manifest.Pages["p"].Version, "the manifest survives a restart")
	got, err := os.ReadFile(filepath.Join(dir, "p.md"))
	require.NoError(t, err)
	require.Equal(t, string(markdown(page{ID: "p", Version: 3})), string(got))
}

// TestStartRepairsEveryCrashPoint builds, for each point where a crash
// can cut a sync short, what it leaves on disk, then starts the app on it
// and lets it sync: afterwards the page file, the manifest and the page
// API agree, and the queue is empty.
func TestStartRepairsEveryCrashPoint(t *testing.T) {
	v1 := page{ID: "p", Title: "P", Version: 1, Blocks: []block{{Type: "paragraph", Text: "one"}}}
	v2 := page{ID: "p", Title: "P", Version: 2, Blocks: []block{{Type: "paragraph", Text: "two"}}}
	cases := []struct {
		name     string
		file     *page // the page file's version
		tempFile bool  // a temporary file of v2's write is left
		manifest *page // the version the manifest lists
		queued   bool  // the page's queue item is still there
		fetches  int   // fetches the start makes
		written  int   // page files it writes
	}{
		{name: "killed while writing the page file", file: &v1, tempFile: true, manifest: &v1, queued: true, fetches: 1, written: 1},
		{name: "page file replaced, manifest not yet", file: &v2, manifest: &v1, queued: true, fetches: 1},
		{name: "page file replaced, no manifest yet", file: &v2, queued: true, fetches: 1},
		{name: "manifest replaced, queue item not yet removed", file: &v2, manifest: &v2, queued: true, fetches: 1},
		{name: "page files of runs that never wrote the manifest", file: &v2},
		{name: "manifest lists a file that is gone", manifest: &v2, fetches: 1, written: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pages, queueDir := filepath.Join(dir, "pages"), filepath.Join(dir, "queue")
			require.NoError(t, os.MkdirAll(pages, 0o755))
			if c.file != nil {
				require.NoError(t, os.WriteFile(filepath.Join(pages, "p.md"), markdown(*c.file), 0o644))
			}
			if c.tempFile {
				require.NoError(t, os.WriteFile(filepath.Join(pages, ".tmp-p.md-4242"), markdown(v2)[:20], 0o644))
			}
			if c.manifest != nil {
				st, _, err := openStore(pages)
				require.NoError(t, err)
				st.mu.Lock()
				st.manifest.Pages["p"] = entry{File: "p.md", Version: c.manifest.Version}
				require.NoError(t, st.saveLocked(time.Now()))
				st.mu.Unlock()
			}
			if c.queued {
				q, err := openQueue(queueDir)
				require.NoError(t, err)
				require.NoError(t, q.put("p", time.Now()))
			}

			synctest.Test(t, func(t *testing.T) {
				fake := newFakeNotion(0, 0)
				fake.create(v2)
				a := openTestApp(t, dir, fake, nil)
				require.NoError(t, a.shutdown(t.Context()))
				fetches, _ := fake.counts()
				require.Equal(t, c.fetches, fetches)
				require.EqualValues(t, c.written, a.st.written.Load())
				requireMirrorMatches(t, dir, fake, []string{"p"})
			})
		})
	}
}
