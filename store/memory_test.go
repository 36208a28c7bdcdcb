package store_test

import (
	"testing"

	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	m := store.NewMemory(store.MemoryConfig{})
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return storetest.Harness{Store: m, Queue: t.Name()}
	})
}
