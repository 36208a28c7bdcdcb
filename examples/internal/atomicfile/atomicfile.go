// Package atomicfile replaces and removes files durably, for the example
// programs' state files and on-disk queues. It is not part of pacer's API.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data so that a crash at any point leaves either
// the old file or the new one, never a torn one: it writes a temporary file
// named ".tmp-*" in the same directory, fsyncs it, renames it over path and
// fsyncs the directory so the rename itself is durable.
func Write(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// Remove removes path and fsyncs its directory.
func Remove(path string) error {
	if err := os.Remove(path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
