package main

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/store"
)

// With a store, as -redis keeps the Runner's state (here a store.Memory),
// the program serves the console at /pacer/, read-only: the overview lists
// the queue "nextup", and alice's page says in a sentence why she waits,
// as Runner.Explain does, with no button to act. In the process, without
// a store, there is nothing for the console to read, and no /pacer/.
func TestConsole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := appConfig{
			APIURL: "http://tasks.invalid", Rate: 3, Burst: 3, Debounce: 5 * time.Second, MaxWait: 15 * time.Second, Workers: 1,
			Base: hookhttp.InProcess{Handler: newDemoAPI(3, 3, time.Now)}, Logger: discard(),
		}
		inProcess, h, err := newApp(cfg)
		require.NoError(t, err)
		status, _ := get(h, "/pacer/")
		require.Equal(t, http.StatusNotFound, status)
		require.NoError(t, inProcess.Shutdown(t.Context()))

		cfg.Store = store.NewMemory(store.MemoryConfig{})
		runner, routes, err := newApp(cfg)
		require.NoError(t, err)
		go runner.Run(t.Context())
		rec := httptest.NewRecorder()
		routes.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(eventBody("task.updated", "a1", "alice")))))
		require.Equal(t, http.StatusAccepted, rec.Code)
		synctest.Wait()

		status, body := get(routes, "/pacer/?counts=inline")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, "?queue=nextup")

		status, body = get(routes, "/pacer/key?queue=nextup&key=alice")
		require.Equal(t, http.StatusOK, status, body)
		x, err := runner.Explain(t.Context(), "alice")
		require.NoError(t, err)
		require.Contains(t, x.String(), "debouncing")
		require.Contains(t, body, x.String())
		require.NotContains(t, body, "confirm?do=", "read-only: no action offered")
		require.NoError(t, runner.Shutdown(t.Context()))
	})
}

// get serves a GET of path and returns its status and its body, unescaped.
func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, html.UnescapeString(rec.Body.String())
}
