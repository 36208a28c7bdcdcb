package pacer_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoreImports keeps the core packages free of heavy dependencies: they
// may import the standard library, golang.org/x/time, golang.org/x/sync,
// github.com/benbjohnson/clock and each other, nothing else.
func TestCoreImports(t *testing.T) {
	core := []string{".", "./debounce", "./fifo", "./mutex", "./ratelimit", "./window"}
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, core...)
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	allowed := []string{
		"github.com/pacerkit/pacer",
		"golang.org/x/time/",
		"golang.org/x/sync/",
		"github.com/benbjohnson/clock",
	}
	for _, pkg := range strings.Fields(string(out)) {
		ok := false
		for _, prefix := range allowed {
			if pkg == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(pkg, prefix) {
				ok = true
			}
		}
		require.True(t, ok, "a core package depends on %s", pkg)
	}
}
