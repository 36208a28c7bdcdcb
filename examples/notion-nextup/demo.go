package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// runDemo plays the embedded scenario over loopback and prints its report.
func runDemo(ctx context.Context, cfg appConfig, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if len(cfg.Secret) == 0 {
		cfg.Secret = []byte("demo-secret")
	}
	fake := newDemoAPI(cfg.Rate, cfg.Burst, time.Now)
	apiSrv, err := hookhttp.Listen("127.0.0.1:0", fake)
	if err != nil {
		return err
	}
	defer apiSrv.Shutdown(context.Background())
	cfg.APIURL = apiSrv.URL()
	d, routes, err := newDemo(cfg, fake)
	if err != nil {
		return err
	}
	hookSrv, err := hookhttp.Listen(cfg.Listen, routes)
	if err != nil {
		return err
	}
	defer hookSrv.Shutdown(context.Background())
	d.post = hookhttp.PostJSON(http.DefaultClient, hookSrv.URL()+"/webhook")
	fmt.Fprintf(stdout, "notion-nextup demo: webhook at %s/webhook, fake task API at %s; debounce %v, max-wait %v, %d worker(s)\n",
		hookSrv.URL(), apiSrv.URL(), cfg.Debounce, cfg.MaxWait, max(cfg.Workers, 1))
	rep, err := d.run(ctx)
	if err != nil {
		return err
	}
	rep.print(stdout)
	if !rep.checks.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}

// serveFake serves the demo's fake task API until ctx ends.
func serveFake(ctx context.Context, cfg appConfig, stdout io.Writer) error {
	srv, err := hookhttp.Listen(cfg.FakeAPI, newDemoAPI(cfg.Rate, cfg.Burst, time.Now))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake task API at %s (users %v)\n", srv.URL(), demoUsers)
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}

// A demo drives the embedded scenario (see README.md), waits until every
// user is served, shuts the Runner down and checks the outcome.
type demo struct {
	fake   *fakeAPI
	runner *pacer.Runner[string, Event]
	obs    *observer
	secret []byte
	post   func(ctx context.Context, body []byte, signature string) (int, error) // a webhook request; its status

	debounce, maxWait time.Duration

	mu        sync.Mutex
	rep       *report
	postErr   error
	streamFor time.Duration // how long dave's edits went on
	streamEnd time.Time
}

// newDemo returns the demo of the service cfg describes against fake, and
// the service's routes; the caller sets post. Plans start on demoToday.
func newDemo(cfg appConfig, fake *fakeAPI) (*demo, http.Handler, error) {
	cfg.Today = func() time.Time { t, _ := time.Parse(dateLayout, demoToday); return t }
	cfg.Observer = newObserver()
	runner, routes, err := newApp(cfg)
	if err != nil {
		return nil, nil, err
	}
	return &demo{fake: fake, runner: runner, obs: cfg.Observer, secret: cfg.Secret, debounce: cfg.Debounce, maxWait: cfg.MaxWait}, routes, nil
}

// run plays the scenario and returns its report. The Runner must not be
// running yet: run starts it and shuts it down.
func (d *demo) run(ctx context.Context) (*report, error) {
	start := time.Now()
	d.rep = &report{statuses: map[int]int{}, events: map[string]int{}}
	var once sync.Once
	d.obs.started = func(user string) {
		if user == "bob" {
			once.Do(func() { d.editTask(ctx, duringRunEdit) })
		}
	}
	ran := make(chan error, 1)
	go func() { ran <- d.runner.Run(ctx) }() // until Shutdown

	var wg sync.WaitGroup
	wg.Go(func() { d.stream(ctx) })
	d.burst(ctx)
	wg.Wait()
	err := errors.Join(d.waitIdle(ctx), d.runner.Shutdown(ctx))
	// Every send is over: the burst's and the stream's, and those of the
	// handler's started hook, which Shutdown waited for.
	if err = errors.Join(err, <-ran, d.postErr); err != nil {
		return nil, err
	}
	d.rep.fill(d, time.Since(start))
	return d.rep, nil
}

// burst makes everyone's quick edits in rounds a few milliseconds apart, with
// an event for an unknown user, events without an assignee, and malformed
// requests in between.
func (d *demo) burst(ctx context.Context) {
	for round := 0; ; round++ {
		more := false
		for _, user := range demoUsers {
			if round < len(burstEdits[user]) {
				d.editTask(ctx, burstEdits[user][round])
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
			for _, b := range badRequests {
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
// the burst goes on: only the max-wait gets him served while they go on.
func (d *demo) stream(ctx context.Context) {
	gap := d.debounce / 2
	start := time.Now()
	for i := range int(2*d.maxWait/gap) + 1 {
		if i > 0 {
			time.Sleep(gap)
		}
		d.editTask(ctx, edit{"d1", setEstimate(1 + i%3)})
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
		d.postErr = cmp.Or(d.postErr, fmt.Errorf("posting webhook: %w", err))
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
		if s, err := d.runner.Stats(ctx); err != nil || statsIdle(s) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the runner to go idle: %w", ctx.Err())
		case <-time.After(d.debounce / 4):
		}
	}
}

// statsIdle reports whether a Runner's Stats show nothing left to do. The
// gauges are read one by one: a burst that the debouncer has just let go
// may be in none of Pending, Queued and InFlight for a moment, but it is
// still in Values, which counts every value accepted and not yet handled or
// dropped.
func statsIdle(s pacer.Stats) bool {
	return s.Values == 0 && s.Queued == 0 && s.InFlight == 0 && s.Pending == 0
}
