package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
)

// openTestApp opens an app on dir whose page API is api, served in
// process; mod adjusts the configuration.
func openTestApp(t *testing.T, dir string, api http.Handler, mod func(*appConfig)) *app {
	t.Helper()
	cfg := appConfig{
		QueueDir: filepath.Join(dir, "queue"), OutDir: filepath.Join(dir, "pages"),
		APIURL: "http://notion.invalid", Rate: 1000, Burst: 1000, Workers: 1,
		Backoff: backoff(time.Second, 10*time.Second),
		Base:    hookhttp.InProcess{Handler: api}, Logger: discard(),
	}
	if mod != nil {
		mod(&cfg)
	}
	a, err := openApp(cfg)
	require.NoError(t, err)
	return a
}

// pageAPI serves every page id at version 7, after calling before, which
// may answer instead (then it returns true).
func pageAPI(before func(w http.ResponseWriter, id string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := filepath.Base(r.URL.Path)
		if before(w, id) {
			return
		}
		_ = json.NewEncoder(w).Encode(page{ID: id, Title: "T", Version: 7})
	})
}

func TestSyncRetriesWithBackoffAndKeepsFailuresQueued(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		fails := 3
		var at []time.Time
		a := openTestApp(t, dir, pageAPI(func(w http.ResponseWriter, _ string) bool {
			at = append(at, time.Now())
			if fails > 0 {
				fails--
				w.WriteHeader(http.StatusBadGateway)
				return true
			}
			return false
		}), func(c *appConfig) { c.Backoff.Jitter = 0 })
		start := time.Now()
		status, _ := a.hook.accept(t.Context(), "p1")
		require.Equal(t, http.StatusOK, status)
		require.NoError(t, a.shutdown(t.Context()), "a graceful shutdown syncs what is queued, retries included")
		require.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second},
			[]time.Duration{at[0].Sub(start), at[1].Sub(start), at[2].Sub(start), at[3].Sub(start)}, "waits of 1 s, 2 s, 4 s")
		require.EqualValues(t, 4, a.counts.Fetches.Load())
		require.EqualValues(t, 1, a.counts.Synced.Load())
		st, err := a.runner.Stats(t.Context())
		require.NoError(t, err)
		require.Equal(t, uint64(3), st.Retries)
		md, err := os.ReadFile(filepath.Join(dir, "pages", "p1.md"))
		require.NoError(t, err)
		require.Contains(t, string(md), "version: 7")
	})
}

func TestSyncDropsPermanentFailures(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		a := openTestApp(t, dir, pageAPI(func(w http.ResponseWriter, _ string) bool {
			w.WriteHeader(http.StatusNotFound)
			return true
		}), nil)
		a.hook.accept(t.Context(), "gone")
		require.NoError(t, a.shutdown(t.Context()))
		require.EqualValues(t, 1, a.counts.Dropped.Load())
		n, err := a.q.len()
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// TestSyncDebouncesEachPage: the changes of a page are synced once they
// go quiet for Debounce, in one fetch, and a page that never goes quiet
// is still synced every MaxWait.
func TestSyncDebouncesEachPage(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		fetched := map[string][]time.Duration{}
		start := time.Now()
		a := openTestApp(t, dir, pageAPI(func(_ http.ResponseWriter, id string) bool {
			mu.Lock()
			defer mu.Unlock()
			fetched[id] = append(fetched[id], time.Since(start))
			return false
		}), func(c *appConfig) { c.Debounce, c.MaxWait = 100*time.Millisecond, time.Second })
		running := make(chan error, 1)
		go func() { running <- a.run(t.Context()) }()

		// quiet: 10 changes 10 ms apart, from 0 to 90 ms.
		for range 10 {
			a.hook.accept(t.Context(), "quiet")
			time.Sleep(10 * time.Millisecond)
		}
		// busy: a change every 30 ms from 100 ms to 2470 ms.
		for range 80 {
			a.hook.accept(t.Context(), "busy")
			time.Sleep(30 * time.Millisecond)
		}
		time.Sleep(time.Second)
		require.NoError(t, a.shutdown(t.Context()))
		require.NoError(t, <-running)
		require.Equal(t, []time.Duration{190 * time.Millisecond}, fetched["quiet"], "one fetch, 100 ms after the last change")
		require.Equal(t, []time.Duration{1100 * time.Millisecond, 2120 * time.Millisecond, 2570 * time.Millisecond}, fetched["busy"],
			"one fetch per MaxWait while the changes go on, then one once they stop")
	})
}

// TestSyncNeverRunsOnePageTwiceAtOnce: with several workers, changes of
// a page that arrive while it is being synced wait for that sync to end,
// and other pages are synced meanwhile.
func TestSyncNeverRunsOnePageTwiceAtOnce(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		inFlight := map[string]int{}
		maxPage, maxAll, all := 0, 0, 0
		a := openTestApp(t, dir, pageAPI(func(_ http.ResponseWriter, id string) bool {
			mu.Lock()
			inFlight[id]++
			all++
			maxPage, maxAll = max(maxPage, inFlight[id]), max(maxAll, all)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			inFlight[id]--
			all--
			mu.Unlock()
			return false
		}), func(c *appConfig) { c.Workers = 3 })
		running := make(chan error, 1)
		go func() { running <- a.run(t.Context()) }()
		var wg sync.WaitGroup
		for _, id := range []string{"a", "b", "c"} {
			for range 3 {
				wg.Go(func() {
					for range 10 {
						a.hook.accept(t.Context(), id)
						time.Sleep(7 * time.Millisecond)
					}
				})
			}
		}
		wg.Wait()
		require.NoError(t, a.shutdown(context.WithoutCancel(t.Context())))
		require.NoError(t, <-running)
		require.Equal(t, 1, maxPage, "one sync per page at a time")
		require.Equal(t, 3, maxAll, "three pages at once")
	})
}
