package pacer_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// coreDeps are the modules a core package may depend on, besides the
// standard library.
var coreDeps = []string{
	"github.com/pacerkit/pacer",
	"golang.org/x/time/",
	"golang.org/x/sync/",
	"github.com/benbjohnson/clock",
}

// TestCoreImports keeps the core packages, the console included, free of
// heavy dependencies: they may import the standard library,
// golang.org/x/time, golang.org/x/sync, github.com/benbjohnson/clock and
// each other, nothing else.
func TestCoreImports(t *testing.T) {
	requireDeps(t, coreDeps, ".", "./debounce", "./fifo", "./mutex", "./ratelimit", "./window", "./store", "./console")
}

// TestStoretestImports keeps the conformance suite, which every engine's
// tests import, as light as the core plus testify (and testify's YAML).
func TestStoretestImports(t *testing.T) {
	requireDeps(t, append([]string{"github.com/stretchr/testify/", "go.yaml.in/yaml/"}, coreDeps...), "./store/storetest")
}

// TestInternalImportsOneWay keeps the import graph one way: no package
// under internal/ depends on the root package, which builds on them; the
// harnesses that drive Runners live with the tests, in store/storetest.
func TestInternalImportsOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./internal/...").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Greater(t, len(lines), 5, "the packages under internal/")
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, " ")
		require.NotContains(t, strings.Fields(deps), "github.com/pacerkit/pacer", "%s depends on the root package", pkg)
	}
}

// requireDeps checks that pkgs depend only on the standard library and
// allowed: module paths, or prefixes when they end in a slash.
func requireDeps(t *testing.T, allowed []string, pkgs ...string) {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	for _, pkg := range strings.Fields(string(out)) {
		ok := false
		for _, prefix := range allowed {
			if pkg == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(pkg, prefix) {
				ok = true
			}
		}
		require.True(t, ok, "%s depends on %s", strings.Join(pkgs, " "), pkg)
	}
}
