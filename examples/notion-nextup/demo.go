package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// A demo drives the embedded scenario: people edit tasks in the fake API and
// each edit arrives as a webhook; then it waits until every user is served,
// shuts the app down and checks the outcome.
type demo struct {
	fake   *fakeAPI
	app    *app
	secret []byte
	// post delivers one webhook request and returns its HTTP status.
	post func(ctx context.Context, body []byte, signature string) (int, error)

	debounce, maxWait time.Duration

	mu        sync.Mutex
	rep       *report
	postErr   error
	streamFor time.Duration // how long dave's edits went on
	streamEnd time.Time
}

// run plays the scenario and returns its report. The app's Runner must not
// be running yet: run starts it and shuts it down.
func (d *demo) run(ctx context.Context) (*report, error) {
	start := time.Now()
	d.rep = newReport()
	var once sync.Once
	d.app.pipe.started = func(user string) {
		if user == "bob" {
			once.Do(func() { d.editTask(ctx, duringRunEdit) })
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- d.app.runner.Run(runCtx) }()

	var wg sync.WaitGroup
	wg.Go(func() { d.stream(ctx) })
	d.burst(ctx)
	wg.Wait()
	err := d.waitIdle(ctx)
	if serr := d.app.runner.Shutdown(ctx); err == nil {
		err = serr
	}
	stop()
	if rerr := <-done; err == nil && rerr != nil && rerr != context.Canceled {
		err = rerr
	}
	if err == nil {
		err = d.postErr
	}
	if err != nil {
		return nil, err
	}
	d.rep.fill(d, time.Since(start))
	return d.rep, nil
}

// burst makes everyone's quick edits in rounds a few milliseconds apart, with
// an event for an unknown user, events without an assignee, and malformed
// requests in between.
func (d *demo) burst(ctx context.Context) {
	edits := burstEdits()
	for round := 0; ; round++ {
		more := false
		for _, user := range demoUsers {
			if round < len(edits[user]) {
				d.editTask(ctx, edits[user][round])
				more = true
			}
		}
		switch round {
		case 0:
			for _, u := range demoStrangers {
				d.send(ctx, eventBody("task.updated", "x1", u), true, u)
			}
			d.send(ctx, eventBody("workspace.updated", "", ""), true, "")
		case 1:
			for _, b := range badRequests() {
				if got := d.send(ctx, []byte(b.body), b.sign, ""); got != b.status {
					d.mu.Lock()
					d.rep.wrongAnswers = append(d.rep.wrongAnswers, fmt.Sprintf("%s: got %d, want %d", b.name, got, b.status))
					d.mu.Unlock()
				}
			}
		case 2:
			d.send(ctx, eventBody("comment.created", "c1", ""), true, "")
		}
		if !more {
			return
		}
		time.Sleep(d.debounce / 8)
	}
}

// stream makes dave's edits half a debounce apart for two max-waits, while
// the burst goes on.
func (d *demo) stream(ctx context.Context) {
	gap := d.debounce / 2
	start := time.Now()
	for i, e := range streamEdits(int(2*d.maxWait/gap) + 1) {
		if i > 0 {
			time.Sleep(gap)
		}
		d.editTask(ctx, e)
	}
	d.mu.Lock()
	d.streamEnd = time.Now()
	d.streamFor = d.streamEnd.Sub(start)
	d.mu.Unlock()
}

// editTask changes a task in the fake API and announces it by webhook.
func (d *demo) editTask(ctx context.Context, e edit) {
	user := d.fake.edit(e.task, e.change)
	d.send(ctx, eventBody("task.updated", e.task, user), true, user)
}

// send posts one webhook request, signed or not, counts its outcome and
// returns its status (0 when it could not be posted).
func (d *demo) send(ctx context.Context, body []byte, signed bool, user string) int {
	sig := ""
	if signed && len(d.secret) > 0 {
		sig = hookhttp.Sign(d.secret, body)
	}
	status, err := d.post(ctx, body, sig)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if d.postErr == nil {
			d.postErr = fmt.Errorf("posting webhook: %w", err)
		}
		return 0
	}
	d.rep.statuses[status]++
	if status == 202 && user != "" {
		d.rep.events[user]++
	}
	return status
}

// waitIdle waits until no user is pending, queued or being processed.
func (d *demo) waitIdle(ctx context.Context) error {
	for {
		idle, err := d.app.idle(ctx)
		if err != nil {
			return fmt.Errorf("waiting for the runner to go idle: %w", err)
		}
		if idle {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the runner to go idle: %w", ctx.Err())
		case <-time.After(d.debounce / 4):
		}
	}
	return nil
}
