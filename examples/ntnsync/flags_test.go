package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHelpExitsZeroAndShowsDefaults(t *testing.T) {
	p := startProgram(t, "-h")
	require.Equal(t, 0, p.wait(t, 10*time.Second), "%s", p.out)
	out := p.out.String()
	require.Contains(t, out, "-dir string")
	require.Contains(t, out, `(default "ntnsync-data")`, "the real mode's -dir default shows in -h:\n%s", out)
	require.Contains(t, out, `(default "127.0.0.1:8080")`)
}
