package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestQueueCoalescesAndKeepsNewerChanges(t *testing.T) {
	q, err := openQueue(t.TempDir())
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	require.NoError(t, q.put("b", t0.Add(time.Second)))
	require.NoError(t, q.put("a", t0.Add(2*time.Second)))
	require.NoError(t, q.put("b", t0.Add(3*time.Second)))
	items, err := q.list()
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, "b", items[0].PageID, "oldest first change first")
	require.Equal(t, 2, items[0].Updates)
	require.Equal(t, t0.Add(time.Second), items[0].First)
	require.Equal(t, t0.Add(3*time.Second), items[0].Last)

	// A change that arrives while b is synced keeps b queued.
	require.NoError(t, q.put("b", t0.Add(4*time.Second)))
	removed, err := q.ack(items[0])
	require.NoError(t, err)
	require.False(t, removed)
	removed, err = q.ack(items[1])
	require.NoError(t, err)
	require.True(t, removed)

	// Reopening continues the sequence, so an old ack never removes a new item.
	q2, err := openQueue(q.dir)
	require.NoError(t, err)
	items, err = q2.list()
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.NoError(t, q2.put("c", t0))
	c, err := q2.read("c")
	require.NoError(t, err)
	require.Greater(t, c.Seq, items[0].Seq)

	require.Error(t, q.put("../etc/passwd", t0), "page ids are file names: only safe ones")
}

// TestOpenRemovesOnlyOwnTempFiles: a run killed in the middle of
// atomicfile.Write leaves ".tmp-<name>-<digits>" behind. Opening the
// queue and the mirror removes those of their own files, and nothing else.
func TestOpenRemovesOnlyOwnTempFiles(t *testing.T) {
	dir := t.TempDir()
	queueDir, pagesDir := filepath.Join(dir, "queue"), filepath.Join(dir, "pages")
	require.NoError(t, os.MkdirAll(queueDir, 0o755))
	require.NoError(t, os.MkdirAll(pagesDir, 0o755))
	write := func(dir, name string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o644))
	}
	for _, name := range []string{".tmp-roadmap.json-123", ".tmp-okrs.json-4094967295"} {
		write(queueDir, name) // the program's: removed
	}
	keepQueue := []string{".tmp-notes", ".tmp-roadmap.json-12a", ".tmp-x.txt-1", "roadmap.json.tmp", ".tmp-.lock-1"}
	for _, name := range keepQueue {
		write(queueDir, name)
	}
	for _, name := range []string{".tmp-roadmap.md-77", ".tmp-.ntnsync-manifest.json-5"} {
		write(pagesDir, name)
	}
	keepPages := []string{".tmp-notes.txt-1", ".tmp-roadmap.json-9", "README.md"}
	for _, name := range keepPages {
		write(pagesDir, name)
	}

	a, err := openApp(appConfig{QueueDir: queueDir, OutDir: pagesDir, APIURL: "http://notion.invalid", Rate: 1, Burst: 1})
	require.NoError(t, err)
	defer func() { require.NoError(t, a.shutdown(t.Context())) }()
	require.ElementsMatch(t, append(keepQueue, lockName), names(t, queueDir))
	require.ElementsMatch(t, keepPages, names(t, pagesDir))
	n, err := a.q.len()
	require.NoError(t, err)
	require.Zero(t, n, "none of them is a queue item")
}
