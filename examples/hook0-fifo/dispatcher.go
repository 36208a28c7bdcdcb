package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// dispatcherConfig configures a dispatcher.
type dispatcherConfig struct {
	Subs        []subscription
	Retry       schedule
	FIFOWorkers int           // deliveries at once to FIFO subscriptions (one per subscription)
	Workers     int           // deliveries at once to concurrent subscriptions
	Rate        float64       // deliveries per second over all subscriptions; 0 is unlimited
	Burst       int           // with Rate
	Secret      []byte        // signs every delivery (X-Hook0-Signature); empty sends none
	Timeout     time.Duration // per HTTP attempt
	Transport   http.RoundTripper
	Logger      *slog.Logger
	// Store, when set, keeps both Runners' state in an engine (-postgres:
	// a pgstore.Store), each under a queue Name of its own, so that the
	// queues survive the process and several dispatchers can share them.
	// nil keeps the state in the process.
	Store store.Store
	// Numbering, with Store, numbers the messages in PostgreSQL and
	// queues them in the same transaction; nil numbers them in the process.
	Numbering *numbering
	// LeaseTTL, with Store, is how long a dispatcher that died keeps a
	// subscription from the others; 0 is pacer's default (30 s).
	LeaseTTL time.Duration
}

// A key names what a Runner serialises: a FIFO subscription ("orders"),
// or a single message of a concurrent subscription ("analytics#12"). It
// is a string so that a Runner with a Config.Store encodes it without a
// KeyCodec.
type key string

// fifoKey is the key of FIFO subscription sub.
func fifoKey(sub string) key { return key(sub) }

// messageKey is the key of message seq of concurrent subscription sub.
func messageKey(sub string, seq uint64) key {
	return key(sub + "#" + strconv.FormatUint(seq, 10))
}

// A dispatcher fans every published event out to the subscriptions that
// match it and delivers the messages through two pacer Runners:
//
//   - fifo, keyed by subscription with MaxBatch 1: a subscription's
//     message N+1 is not sent before message N succeeded or was
//     dead-lettered, and a failing head waits for its retry without
//     holding a worker, so other subscriptions go on;
//   - concurrent, keyed by subscription and message: every message is its
//     own key, so a subscription's messages go out in parallel and retry
//     independently.
//
// Separate Runners give each mode its own workers, so neither can starve
// the other.
type dispatcher struct {
	subs       []subscription
	urls       map[string]string
	retry      schedule
	fifo       *pacer.Runner[key, message]
	concurrent *pacer.Runner[key, message]
	track      *tracker
	client     *http.Client
	secret     []byte
	log        *slog.Logger
	stored     bool       // the Runners keep their state in a Store
	num        *numbering // nil: the process numbers the messages

	// beforeSend, when set, runs at the start of every attempt; the demo
	// makes it panic once to show that the Runner recovers.
	beforeSend func(m message)

	mu  sync.Mutex
	seq map[string]uint64
}

func newDispatcher(cfg dispatcherConfig) (*dispatcher, error) {
	if err := cfg.Retry.validate(); err != nil {
		return nil, err
	}
	urls := map[string]string{}
	for _, s := range cfg.Subs {
		if _, ok := urls[s.Name]; ok {
			return nil, fmt.Errorf("subscription %q defined twice", s.Name)
		}
		urls[s.Name] = s.URL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &dispatcher{
		subs:   cfg.Subs,
		urls:   urls,
		retry:  cfg.Retry,
		track:  newTracker(cfg.Subs),
		client: &http.Client{Transport: cfg.Transport, Timeout: cfg.Timeout},
		secret: cfg.Secret,
		log:    cfg.Logger,
		seq:    map[string]uint64{},
		stored: cfg.Store != nil,
		num:    cfg.Numbering,
	}
	var limiter ratelimit.Limiter
	if cfg.Rate > 0 {
		b, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
		if err != nil {
			return nil, err
		}
		// The handler's RetryAfter delays one subscription and never
		// pauses the bucket: one failing receiver slows no other.
		limiter = b
	}
	base := pacer.Config[key, message]{
		MaxBatch: 1,
		// The handler picks its delays with pacer.RetryAfter and gives up
		// with pacer.Permanent; this backoff, without a limit, only paces
		// a handler that panicked.
		Retry:   pacer.Backoff{Initial: max(cfg.Retry.FastDelay, time.Millisecond), Max: max(cfg.Retry.SlowDelay, cfg.Retry.FastDelay, time.Millisecond), Attempts: pacer.Unlimited},
		Limiter: limiter,
		Logger:  cfg.Logger,
		OnEvent: d.track.event,
		OnDrop:  d.deadLetter,
	}
	if cfg.Store != nil { // without one there are no leases
		base.Store, base.LeaseTTL = cfg.Store, cfg.LeaseTTL
	}
	fifoCfg, concCfg := base, base
	fifoCfg.Workers, concCfg.Workers = cfg.FIFOWorkers, cfg.Workers
	if cfg.Store != nil {
		fifoCfg.Name, concCfg.Name = fifoQueue, concurrentQueue
	}
	var err error
	if d.fifo, err = pacer.New(fifoCfg, d.handle); err != nil {
		return nil, err
	}
	if d.concurrent, err = pacer.New(concCfg, d.handle); err != nil {
		_ = d.fifo.Shutdown(context.Background())
		return nil, err
	}
	return d, nil
}

// publish queues ev for every subscription that matches its type and
// returns how many.
func (d *dispatcher) publish(ctx context.Context, ev Event) (int, error) {
	now := time.Now()
	if d.num != nil {
		return d.publishNumbered(ctx, ev, now)
	}
	d.mu.Lock() // numbering and queueing in one step keeps Add order = Seq order
	defer d.mu.Unlock()
	n := 0
	for _, s := range d.subs {
		if !s.matches(ev.Type) {
			continue
		}
		d.seq[s.Name]++
		m := message{Sub: s.Name, Seq: d.seq[s.Name], Event: ev, Published: now}
		d.track.published(m)
		r, k := d.concurrent, messageKey(s.Name, m.Seq)
		if s.FIFO {
			r, k = d.fifo, fifoKey(s.Name)
		}
		if err := r.Add(ctx, k, m); err != nil {
			d.track.lost(m)
			return n, err
		}
		n++
	}
	return n, nil
}

// publishNumbered is publish with d.num: the database numbers the
// messages, for every dispatcher of the store.
func (d *dispatcher) publishNumbered(ctx context.Context, ev Event, now time.Time) (int, error) {
	var subs []subscription
	for _, s := range d.subs {
		if s.matches(ev.Type) {
			subs = append(subs, s)
		}
	}
	if len(subs) == 0 {
		return 0, nil
	}
	msgs, err := d.num.publish(ctx, ev, subs, now, d.track.published)
	if err != nil {
		for _, m := range msgs {
			d.track.lost(m)
		}
		return 0, err
	}
	return len(msgs), nil
}

// run runs both Runners until ctx ends or shutdown has drained them. A
// shutdown that came first makes it return nil at once.
func (d *dispatcher) run(ctx context.Context) error {
	var wg sync.WaitGroup
	var ferr, cerr error
	wg.Go(func() { ferr = d.fifo.Run(ctx) })
	wg.Go(func() { cerr = d.concurrent.Run(ctx) })
	wg.Wait()
	if errors.Is(ferr, pacer.ErrClosed) {
		ferr = nil
	}
	if errors.Is(cerr, pacer.ErrClosed) {
		cerr = nil
	}
	return errors.Join(ferr, cerr)
}

// shutdown stops intake and delivers what is queued, retries included,
// unless ctx ends first: what is left then goes to the dead letters.
func (d *dispatcher) shutdown(ctx context.Context) error {
	var wg sync.WaitGroup
	var ferr, cerr error
	wg.Go(func() { ferr = d.fifo.Shutdown(ctx) })
	wg.Go(func() { cerr = d.concurrent.Shutdown(ctx) })
	wg.Wait()
	return errors.Join(ferr, cerr)
}

// deadLetter is the Runners' OnDrop: a message that used up its attempts
// (or that a cut-short shutdown left) joins the dead-letter list. For a
// FIFO subscription it runs before the next message is sent.
func (d *dispatcher) deadLetter(k key, batch []message, err error) {
	for _, m := range batch {
		d.track.dead(m, err)
		d.log.Warn("dead-lettered", "subscription", m.Sub, "seq", m.Seq, "event", m.Event.ID, "err", err)
	}
}
