package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestDemo plays the demo on fake time, with the webhook and the page API
// served in process and real files in a temporary directory.
func TestDemo(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				fake := newDemoNotion(30*time.Millisecond, 4, time.Now())
				cfg := appConfig{
					QueueDir: filepath.Join(dir, "queue"), OutDir: filepath.Join(dir, "pages"),
					APIURL: "http://notion.invalid", Secret: []byte("s3cret"),
					Rate: 3, Burst: 3, Workers: workers,
					Debounce: 100 * time.Millisecond, MaxWait: time.Second,
					Backoff: backoff(200*time.Millisecond, 2*time.Second),
					Base:    hookhttp.InProcess{Handler: fake}, Logger: discard(),
				}
				d := &demo{cfg: cfg, fake: fake, gap: 20 * time.Millisecond}
				d.post = hookhttp.PostJSON(&http.Client{Transport: hookhttp.InProcess{Handler: d}}, "http://ntnsync.invalid/webhook")
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
				defer cancel()
				rep, err := d.run(ctx)
				require.NoError(t, err)
				var out bytes.Buffer
				rep.print(&out)
				t.Log("\n" + out.String())
				for _, c := range rep.checks {
					require.True(t, c.ok, "check failed: %s\n%s", c.name, out.String())
				}
				require.Equal(t, int64(len(crashPages)+burstRounds*len(demoPages)), rep.accepted)
				require.Equal(t, int64(1), rep.ignored)
				require.Less(t, rep.fetches, int(rep.accepted))
				require.Equal(t, uint64(rep.failed), rep.runner.Retries)
				require.EqualValues(t, rep.fetches, rep.sync.Fetches.Load())
				require.Zero(t, rep.sync.Dropped.Load())
				requireMirrorMatches(t, dir, fake, demoPages)
			})
		})
	}
}
