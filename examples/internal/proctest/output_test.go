package proctest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/pacerkit/pacer/examples/internal/proctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A process writes to an Output while the test reads it: under -race,
// reading while the copying goroutines write must not race, and at the
// end the Output holds both streams.
func TestOutputReadWhileWritten(t *testing.T) {
	out := new(proctest.Output)
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done")
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for reading := true; reading; {
		select {
		case err := <-done:
			require.NoError(t, err)
			reading = false
		default:
			_ = out.String()
		}
	}
	for _, line := range []string{"out1", "out5", "err1", "err5"} {
		require.True(t, strings.Contains(out.String(), line+"\n"), "%q in %q", line, out.String())
	}
}
