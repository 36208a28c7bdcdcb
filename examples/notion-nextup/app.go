package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// appConfig is what the program needs to run, from flags or the demo.
type appConfig struct {
	APIURL   string            // base URL of the task API
	Token    string            // task API bearer token, optional
	Secret   []byte            // webhook HMAC secret, optional
	Rate     float64           // task API requests per second, all users together
	Burst    int               // task API burst
	Debounce time.Duration     // quiet time per user before a run
	MaxWait  time.Duration     // longest a user waits while edits keep coming
	Adaptive time.Duration     // when > Debounce, the debounce may grow up to it under backlog or 429s
	Workers  int               // runs at once (different users)
	Today    func() time.Time  // the day plans start; time.Now when nil
	Base     http.RoundTripper // transport under the pacing; http.DefaultTransport when nil
	Logger   *slog.Logger

	// With -redis, the state every instance shares: the users' debounce
	// and queue, and the API's rate limit with its pause.
	Store    store.Store   // the Runner's state (queue "nextup"); nil keeps it in the process
	Limiter  apiLimiter    // the API's bucket; nil makes one in the process of Rate and Burst
	LeaseTTL time.Duration // with Store: how long a dead instance keeps its user; 0 is the Runner's default
}

// An apiLimiter paces every request to the task API and is paused, for every
// request, by a 429's Retry-After.
type apiLimiter interface {
	ratelimit.Limiter
	ratelimit.Pauser
}

// queueName is the Runner's queue in the Store: the same on every instance.
const queueName = "nextup"

// An app is the running service: the webhook hands events to a Runner keyed
// by assignee; the Runner debounces each user, queues ready users first come
// first served, runs the pipeline for one user at a time per worker and
// retries failures; every API call waits its turn at one token bucket.
type app struct {
	runner *pacer.Runner[string, Event]
	bucket apiLimiter
	pipe   *pipeline
	hook   *webhook

	mu      sync.Mutex
	retries map[string]int
	dropped map[string]error
	bursts  map[string][]burst // debounced bursts queued, per user
}

// A burst is one debounced group of a user's events entering the queue.
type burst struct {
	at     time.Time     // when it was queued
	size   int           // events in it
	waited time.Duration // from its first event to being queued
}

func newApp(cfg appConfig) (*app, error) {
	if cfg.Today == nil {
		cfg.Today = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var bucket apiLimiter = cfg.Limiter
	if bucket == nil {
		b, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
		if err != nil {
			return nil, err
		}
		bucket = b
	}
	// The transport pauses the bucket on a 429 with Retry-After, so every
	// user backs off, and retries the request itself. With an adaptive
	// debounce it does not retry: the 429 reaches the Runner as a
	// ratelimit.LimitError (see client.do), which lengthens the debounce,
	// and the user's run starts over after the Retry-After.
	retries := 3
	if cfg.Adaptive > cfg.Debounce {
		retries = -1
	}
	hc := &http.Client{Transport: &ratelimit.Transport{Base: cfg.Base, Limiter: bucket, MaxRetries: retries}}
	a := &app{
		bucket:  bucket,
		pipe:    newPipeline(&client{base: cfg.APIURL, token: cfg.Token, hc: hc}, cfg.Today, cfg.Logger),
		retries: make(map[string]int),
		dropped: make(map[string]error),
		bursts:  make(map[string][]burst),
	}
	rc := pacer.Config[string, Event]{
		Debounce: cfg.Debounce,
		MaxWait:  cfg.MaxWait,
		Workers:  cfg.Workers,
		// Waits of 250 ms, 1 s, 2 s: three retries after the first try.
		Retry:   pacer.Backoff{Initial: 250 * time.Millisecond, Multiplier: 4, Max: 2 * time.Second, Attempts: 4},
		Logger:  cfg.Logger,
		OnEvent: a.onEvent,
		// With a Store, each run's lease carries a fence that the client
		// sends along (see client.do).
		Store: cfg.Store,
	}
	if cfg.Store != nil {
		rc.Name, rc.LeaseTTL = queueName, cfg.LeaseTTL
	}
	if cfg.Adaptive > cfg.Debounce {
		rc.Adaptive = pacer.Adaptive{Max: cfg.Adaptive}
	}
	var err error
	a.runner, err = pacer.New(rc, a.pipe.handle)
	if err != nil {
		return nil, fmt.Errorf("nextup: %w", err)
	}
	a.hook = &webhook{secret: cfg.Secret, enqueue: a.runner.Add, now: time.Now, log: cfg.Logger}
	return a, nil
}

func (a *app) onEvent(e pacer.Event[string]) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch e.Kind {
	case pacer.EventRetry:
		a.retries[e.Key]++
	case pacer.EventDropped:
		a.dropped[e.Key] = e.Err
	case pacer.EventReady:
		a.bursts[e.Key] = append(a.bursts[e.Key], burst{at: e.Time, size: e.Size, waited: e.Delay})
	}
}

// idle reports whether no user is waiting, queued or being processed.
func (a *app) idle(ctx context.Context) (bool, error) {
	s, err := a.runner.Stats(ctx)
	return err == nil && statsIdle(s.Values, s.Queued, s.InFlight, s.Pending), err
}

// statsIdle reports whether a Runner's Stats show nothing left to do. The
// gauges are read one by one: a burst that the debouncer has just let go
// may be in none of Pending, Queued and InFlight for a moment, but it is
// still in Values, which counts every value accepted and not yet handled or
// dropped.
func statsIdle(values, queued, inFlight, pending int) bool {
	return values == 0 && queued == 0 && inFlight == 0 && pending == 0
}
