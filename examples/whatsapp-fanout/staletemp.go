package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// removeStaleTemps removes the temporary files that writes of the state
// file at path left behind when the program was killed mid-write. They are
// named as atomicfile.Write names them, ".tmp-" + the file's name + "-" +
// digits, in the file's directory; nothing else is touched. The caller must
// hold the state file's lock: a temporary file of a live writer is not
// stale.
func removeStaleTemps(path string) error {
	dir, prefix := filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
