package pacer_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// A panic in OnDrop or OnEvent is not recovered: it crashes the program,
// whether a worker called it (OnDrop for a Permanent error) or the
// debouncer's goroutine did (OnEvent for a burst that became ready). Only
// the handler is recovered. The test runs each case in a child process.
func TestCallbackPanicCrashes(t *testing.T) {
	if which := os.Getenv("PACER_CALLBACK_PANIC"); which != "" {
		synctest.Test(t, func(t *testing.T) { panicIn(t, which) })
		return // not reached when the child crashes, as it must
	}
	for _, which := range []string{"OnDrop", "OnEvent"} {
		t.Run(which, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestCallbackPanicCrashes$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PACER_CALLBACK_PANIC="+which)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child must crash; it printed:\n%s", out.String())
			require.Contains(t, out.String(), "panic: "+which+" bug")
		})
	}
}

// panicIn runs a Runner whose callback named which panics.
func panicIn(t *testing.T, which string) {
	cfg := pacer.Config[string, int]{}
	switch which {
	case "OnDrop":
		cfg.OnDrop = func(string, []int, error) { panic("OnDrop bug") }
	case "OnEvent":
		cfg.Debounce = time.Second
		cfg.OnEvent = func(e pacer.Event[string]) {
			if e.Kind == pacer.EventReady {
				panic("OnEvent bug")
			}
		}
	}
	r, err := pacer.New(cfg, func(context.Context, string, []int) error {
		return pacer.Permanent(errors.New("bad payload"))
	})
	require.NoError(t, err)
	stop := start(t, r)
	require.NoError(t, r.Add(t.Context(), "k", 1))
	time.Sleep(time.Minute)
	stop()
}
