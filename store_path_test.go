package pacer_test

import (
	"testing"
	"testing/synctest"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A path is where a test's Runner keeps its state: it returns the config
// to use for cfg.
type path func(cfg pacer.Config[string, int]) pacer.Config[string, int]

// inProcess keeps the state in the process: Config.Store is nil.
func inProcess(cfg pacer.Config[string, int]) pacer.Config[string, int] { return cfg }

// onStore keeps the state in a fresh store.Memory engine.
func onStore(cfg pacer.Config[string, int]) pacer.Config[string, int] {
	cfg.Store = store.NewMemory(store.MemoryConfig{})
	cfg.Name = "test"
	return cfg
}

// bothPaths runs test in a synctest bubble once on each path, so that a
// guarantee of the Runner is checked with and without a Store.
func bothPaths(t *testing.T, test func(t *testing.T, on path)) {
	for _, p := range []struct {
		name string
		on   path
	}{{"in-process", inProcess}, {"store", onStore}} {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { test(t, p.on) })
		})
	}
}
