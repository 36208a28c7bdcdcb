//go:build unix

package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"sync"
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
		"-rate", "1000", "-burst", "100", "-workers", "3", "-debounce", "2ms", "-max-wait", "20ms",
		"-retry", "5ms", "-retry-max", "50ms", "-grace", "20s"}
	ctx := t.Context()

	var mu sync.Mutex
	unannounced := map[string]bool{} // edited, but no 200 for it yet
	edits, answered := 0, 0
	// announce posts a webhook about page id, as Notion does after an
	// edit and again until it gets a 200, and reports whether it got one.
	announce := func(post func(context.Context, []byte) (int, error), id string) bool {
		status, err := post(ctx, fmt.Appendf(nil, `{"type":"page.content_updated","entity":{"id":%q,"type":"page"}}`, id))
		ok := err == nil && status == 200
		mu.Lock()
		defer mu.Unlock()
		if ok {
			delete(unannounced, id)
			answered++
		}
		return ok
	}
	edit := func(post func(context.Context, []byte) (int, error), id string) bool {
		fake.edit(id, time.Now())
		mu.Lock()
		edits++
		unannounced[id] = true
		mu.Unlock()
		return announce(post, id)
	}
	const posters = 3 // each edits its own share of the pages, in turn
	for range 8 {
		p := startProgram(t, args...)
		post := signedPoster(p.webhookURL(t), secret)
		time.AfterFunc(time.Duration(200+rng.IntN(400))*time.Millisecond, func() { _ = p.cmd.Process.Signal(syscall.SIGKILL) })
		var wg sync.WaitGroup
		for w := range posters {
			wg.Go(func() {
				// Until the kill: a live program answers every webhook 200.
				for i := w; edit(post, ids[i%len(ids)]); i += posters {
				}
			})
		}
		wg.Wait()
		require.Equal(t, -1, p.wait(t, 10*time.Second), "killed by the signal:\n%s", p.out)
	}
	require.GreaterOrEqual(t, edits, 2*len(ids), "every page was edited during the killed runs")

	p := startProgram(t, args...)
	post := signedPoster(p.webhookURL(t), secret)
	for _, id := range slices.Sorted(maps.Keys(unannounced)) {
		require.True(t, announce(post, id), "the last run answers 200")
	}
	p.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.wait(t, 25*time.Second), "%s", p.out)
	t.Logf("%d edits, %d webhooks answered 200 over 9 runs, 8 of them killed", edits, answered)

	requireMirrorMatches(t, dir, fake, ids)
}
