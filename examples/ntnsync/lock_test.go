//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package main

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

func TestSecondProcessIsKeptOffTheQueue(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		api := pageAPI(func(http.ResponseWriter, string) bool { return false })
		a := openTestApp(t, dir, api, nil)
		_, err := openApp(a.cfg)
		require.ErrorContains(t, err, "in use by another process")
		require.NoError(t, a.shutdown(t.Context()))
		b := openTestApp(t, dir, api, nil) // free again
		require.NoError(t, b.shutdown(t.Context()))
	})
}
