package main

import (
	"os"
	"path/filepath"
	"regexp"
)

// tempName matches the temporary files of atomicfile.Write: ".tmp-", the
// name of the file being replaced, "-" and the random digits of
// os.CreateTemp. A process killed between creating one and renaming it
// over its target leaves it behind.
var tempName = regexp.MustCompile(`^\.tmp-(.+)-[0-9]+$`)

// removeTempFiles removes from dir the temporary files that a killed run
// left while writing a file that ours says belongs to the program, and
// returns how many it removed. Files of any other name stay. It must only
// run while no other process writes in dir, which the queue's lock file
// ensures.
func removeTempFiles(dir string, ours func(target string) bool) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		m := tempName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() || !ours(m[1]) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
