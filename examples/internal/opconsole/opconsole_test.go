package opconsole

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/console"
	"github.com/pacerkit/pacer/store"
)

// Actions are let through from a loopback address only.
func TestFromLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "127.9.9.9:1": true, "[::1]:8080": true,
		"192.0.2.1:8080": false, "[2001:db8::1]:8080": false, "[::ffff:192.0.2.1]:1": false, "[::ffff:127.0.0.1]:1": true,
		"": false, "localhost:8080": false, "127.0.0.1": false,
	} {
		r := httptest.NewRequest(http.MethodPost, "/pacer/act", nil)
		r.RemoteAddr = addr
		err := fromLoopback(r, console.Action{Kind: console.PauseQueue, Queue: "q"})
		require.Equal(t, ok, err == nil, "%q: %v", addr, err)
	}
}

// MustMount serves the console at /pacer/, and only there.
func TestMount(t *testing.T) {
	mux := http.NewServeMux()
	MustMount(mux, store.NewMemory(store.MemoryConfig{}), false)
	for path, want := range map[string]int{"/pacer/": http.StatusOK, "/": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, want, rec.Code, path)
	}
	require.PanicsWithError(t, "console: Config.Store is nil", func() { MustMount(http.NewServeMux(), nil, false) })
}
