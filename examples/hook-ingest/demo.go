package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// plan is the stream of events the demo sends for one session.
type plan struct {
	Session string
	At      []time.Duration // when each event is sent, counted from the start
	Busy    bool            // never quiet: must be processed at max-wait while its events keep coming
}

// defaultPlans returns the demo's sessions, timed relative to the debounce
// settings so the demo shows the same behaviour at any scale:
//
//	burst       8 events in quick succession: one run
//	two-bursts  two bursts with a quiet pause between them: two runs
//	busy        an event every quiet/3 for 2.5×max-wait: runs at max-wait
func defaultPlans(quiet, maxWait time.Duration) []plan {
	fast := quiet / 20
	return []plan{
		{Session: "burst", At: series(0, 8, fast)},
		{Session: "two-bursts", At: append(series(0, 6, fast), series(5*fast+3*quiet, 6, fast)...)},
		{Session: "busy", At: series(0, int(5*maxWait/2/(quiet/3)), quiet/3), Busy: true},
	}
}

// series returns n instants, every gap, from start on.
func series(start time.Duration, n int, gap time.Duration) []time.Duration {
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = start + time.Duration(i)*gap
	}
	return at
}

// runDemo plays the demo in a temporary directory against a fake remote on
// loopback, which takes 50 ms per batch, prints its report and returns
// whether every check held.
func runDemo(ctx context.Context, quiet, maxWait time.Duration, out io.Writer) (bool, error) {
	dir, err := os.MkdirTemp("", "hook-ingest-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	rem := newRemote("demo-token", 50*time.Millisecond, nil)
	srv, err := hookhttp.Listen("127.0.0.1:0", rem)
	if err != nil {
		return false, err
	}
	defer srv.Shutdown(context.Background())
	url, plans := srv.URL()+"/batches", defaultPlans(quiet, maxWait)
	fmt.Fprintf(out, "hook-ingest demo: %d sessions, quiet %v, max-wait %v, remote %s\n", len(plans), quiet, maxWait, url)
	p := params{Quiet: quiet, MaxWait: maxWait, Deliver: httpDeliver(&http.Client{Timeout: deliverTimeout}, url, "demo-token")}
	r, err := play(ctx, p, dir, plans, rem)
	if err != nil {
		return false, err
	}
	r.print(out)
	return r.OK(), nil
}

// play sends every planned event at its planned time, each on a goroutine
// of its own that does what an event process does: record, then process.
// Each opens the lock files anew, and a flock belongs to an open file, so
// they exclude each other exactly as processes do. play fails only if the
// demo could not run; whether the guarantees held is in the report.
func play(ctx context.Context, p params, dir string, plans []plan, rem *remote) (report, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	start := time.Now()
	for _, pl := range plans {
		s := newSession(dir, pl.Session)
		for i, at := range pl.At {
			wg.Go(func() {
				id := strconv.Itoa(i + 1)
				err := sleep(ctx, time.Until(start.Add(at)))
				if err == nil {
					err = record(ctx, s, id)
				}
				if err == nil {
					err = process(ctx, p, s, id)
				}
				if err != nil {
					mu.Lock()
					defer mu.Unlock()
					failures = append(failures, fmt.Sprintf("%s event %s: %v", s.id, id, err))
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	logs, err := readLogs(dir, plans)
	if err != nil {
		return report{}, err
	}
	return buildReport(plans, failures, logs, rem, elapsed), nil
}
