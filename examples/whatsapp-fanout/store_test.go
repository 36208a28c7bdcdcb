package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// A program killed while writing its state file leaves the temporary
// file of that write behind. The next run removes such files of its own
// state file, and nothing else.
func TestStaleTempFilesRemoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSetup(t, "10:00:00", 2, "acct")
		dir := filepath.Dir(s.cfg.State)
		base := filepath.Base(s.cfg.State)
		ours := []string{".tmp-" + base + "-1234567", ".tmp-" + base + "-89"}
		// The temporary files of "other.json" and of "<base>-x", and names
		// that only look alike.
		others := []string{".tmp-other.json-1", ".tmp-" + base + "-x-123", base + ".tmp", "tmp-" + base + "-1", ".tmp-" + base}
		for _, name := range append(ours, others...) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o600))
		}
		require.Equal(t, statusSuccess, s.run(t)[0].Status)
		for _, name := range ours {
			require.NoFileExists(t, filepath.Join(dir, name))
		}
		for _, name := range others {
			require.FileExists(t, filepath.Join(dir, name))
		}
	})
}

// One process at a time keeps a state file: another run on it, while the
// first holds it, fails at once and sends nothing.
func TestStateFileInUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSetup(t, "10:00:00", 2, "acct")
		held, err := openStateFile(t.Context(), s.cfg.State)
		require.NoError(t, err)
		_, err = run(t.Context(), s.cfg, io.Discard)
		require.ErrorContains(t, err, "is in use by another process")
		require.Empty(t, s.fake.snapshot().Attempts)
		require.NoError(t, held.close())
		require.Equal(t, statusSuccess, s.run(t)[0].Status)
	})
}
