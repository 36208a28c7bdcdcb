package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKilledRunsLoseNothing runs the program as a real process on one
// directory eight times, posts page edits to it as fast as it answers and
// kills it with SIGKILL at a random moment of each run, while requests and
// syncs are in flight; an edit whose webhook got no 200 is announced again
// in the next run, as Notion redelivers. A ninth run announces what is
// left and stops on SIGTERM. Then every page file, the manifest and the
// page API agree, and the queue directory is empty.
func TestKilledRunsLoseNothing(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	dir := t.TempDir()
	fake := newFakeNotion(time.Millisecond, 5)
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("page-%02d", i+1)
		ids = append(ids, id)
		fake.create(page{ID: id, Title: "Page " + id, Version: 1, LastEdited: time.Now(), Blocks: []block{{Type: "paragraph", Text: "start"}}})
	}
	api := httptest.NewServer(fake)
	defer api.Close()
	secret := []byte("kill-test-secret")
	args := []string{"-api-url", api.URL, "-dir", dir, "-listen", "127.0.0.1:0", "-secret", string(secret),
		"-rate", "1000", "-burst", "100", "-workers", "3", "-retry", "5ms", "-retry-max", "50ms", "-grace", "20s"}
	ctx := t.Context()

	unannounced := map[string]bool{} // edited, but no 200 for it yet
	answered, next := 0, 0
	announce := func(post func(context.Context, []byte) (int, error), id string) bool {
		status, err := post(ctx, fmt.Appendf(nil, `{"type":"page.content_updated","entity":{"id":%q,"type":"page"}}`, id))
		if err == nil && status == 200 {
			delete(unannounced, id)
			answered++
			return true
		}
		return false
	}
	for range 8 {
		p := startProgram(t, args...)
		post := signedPoster(p.webhookURL(t), secret)
		kill := time.AfterFunc(time.Duration(100+rng.IntN(300))*time.Millisecond, func() { _ = p.cmd.Process.Signal(syscall.SIGKILL) })
		for !p.exited() {
			id := ids[next%len(ids)]
			next++
			fake.edit(id, time.Now())
			unannounced[id] = true
			announce(post, id)
		}
		kill.Stop()
		require.Equal(t, -1, p.wait(t, 10*time.Second), "killed by the signal:\n%s", p.out)
	}
	require.GreaterOrEqual(t, next, len(ids), "every page was edited during the killed runs")

	p := startProgram(t, args...)
	post := signedPoster(p.webhookURL(t), secret)
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range unannounced {
			if !yield(id) {
				return
			}
		}
	}) {
		require.True(t, announce(post, id), "the last run answers 200")
	}
	p.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.wait(t, 25*time.Second), "%s", p.out)
	t.Logf("%d edits, %d webhooks answered 200 over 9 runs, 8 of them killed", next, answered)

	requireMirrorMatches(t, dir, fake, ids)
}

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
