package pgstore_test

import (
	"testing"

	"github.com/pacerkit/pacer/store/storetest"
)

func TestConformance(t *testing.T) {
	s := newStore(t, connect(t, appName(t)))
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return storetest.Harness{Store: s, Queue: t.Name()}
	})
}
