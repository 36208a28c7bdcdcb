package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// bin is the pacer binary the tests run, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pacer-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "pacer")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pacer:", err)
		os.Exit(1)
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		// goleak.VerifyTestMain exits; its checks run here instead, so that
		// the binary is removed first.
		code = m.Run()
		if code == 0 {
			if err := goleak.Find(); err != nil {
				fmt.Fprintln(os.Stderr, "goleak:", err)
				code = 1
			}
		}
	}()
	os.Exit(code)
}
