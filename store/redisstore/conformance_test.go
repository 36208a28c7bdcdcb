package redisstore_test

import (
	"testing"

	"github.com/pacerkit/pacer/store/storetest"
)

// TestConformance holds the Store to the contract of package store, each
// scenario under its own prefix.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		s, _, _ := newStore(t)
		return storetest.Harness{Store: s, Queue: t.Name()}
	})
}
