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

// inProcess exposes an app's webhook without a listener; stopping intake
// is the webhook's own stop.
func inProcess(a *app) (poster, func(context.Context) error, error) {
	hc := &http.Client{Transport: hookhttp.InProcess{Handler: routes(a)}}
	return hookhttp.PostJSON(hc, "http://ntnsync.invalid/webhook"), func(context.Context) error { a.hook.stop(); return nil }, nil
}

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
				d := &demo{cfg: cfg, fake: fake, expose: inProcess, gap: 20 * time.Millisecond}
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
				require.Equal(t, rep.fetches, rep.sync.Fetches)
				require.Zero(t, rep.sync.Dropped)
				requireMirrorMatches(t, dir, fake, demoPages)
			})
		})
	}
}
