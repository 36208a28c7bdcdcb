package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireMirrorMatches checks that dir's page files and manifest hold the
// page API's latest version of every page and nothing else, and that its
// queue holds nothing.
func requireMirrorMatches(t *testing.T, dir string, fake *fakeNotion, ids []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pages", manifestName))
	require.NoError(t, err)
	var m manifest
	require.NoError(t, json.Unmarshal(data, &m))
	var missing, stale []string
	for _, id := range ids {
		want := fake.current(id)
		e, ok := m.Pages[id]
		switch {
		case !ok:
			missing = append(missing, id)
		case e.Version != want.Version || e.File != id+".md":
			stale = append(stale, fmt.Sprintf("%s: manifest %+v, page API version %d", id, e, want.Version))
		}
		got, err := os.ReadFile(filepath.Join(dir, "pages", id+".md"))
		require.NoError(t, err)
		require.Equal(t, string(markdown(want)), string(got), "%s: the file holds the latest version", id)
	}
	require.Empty(t, missing, "pages missing from the manifest (of %d)", len(ids))
	require.Empty(t, stale, "manifest entries that disagree with the files")
	require.Len(t, m.Pages, len(ids), "the manifest lists nothing else")

	files := names(t, filepath.Join(dir, "pages"))
	want := []string{manifestName}
	for _, id := range ids {
		want = append(want, id+".md")
	}
	require.ElementsMatch(t, want, files, "the pages directory holds the pages and the manifest, no temporary file")
	for _, name := range names(t, filepath.Join(dir, "queue")) {
		require.Equal(t, lockName, name, "the queue is empty, no temporary file left")
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
