// Command hook0-fifo delivers webhooks the way Hook0 does, on two
// pacer.Runners: a FIFO subscription gets message N+1 only once message N
// succeeded or was dead-lettered, the others get theirs concurrently, and
// none waits for another that fails. Without -sub it plays a demo against
// a fake receiver and checks it. See README.md.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout) // cli.go: the demo, a dispatcher, or -receive
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hook0-fifo:", err)
		os.Exit(1)
	}
}

// newDispatcher wires two Runners with MaxBatch 1 and one handler, each
// with its own workers:
//   - fifo, keyed by subscription: one lease per key means message N+1
//     waits for N; a failed attempt ends the lease with the handler's retry
//     delay, so the worker goes on to other subscriptions meanwhile;
//   - concurrent, keyed by message: they go out and retry in parallel.
func newDispatcher(cfg dispatcherConfig) (*dispatcher, error) {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	d := &dispatcher{cfg: cfg, track: newTracker(cfg.Subs), seq: map[string]uint64{},
		client: &http.Client{Transport: cfg.Transport, Timeout: cfg.Timeout}}
	base := pacer.Config[key, message]{
		MaxBatch: 1,
		// The handler picks its delays (pacer.RetryAfter) and gives up
		// (pacer.Permanent); this backoff only paces a handler that panicked.
		Retry:   pacer.Backoff{Initial: max(cfg.Retry.FastDelay, time.Millisecond), Max: max(cfg.Retry.SlowDelay, cfg.Retry.FastDelay, time.Millisecond), Attempts: pacer.Unlimited},
		Logger:  cfg.Logger,
		OnEvent: d.track.event,
		OnDrop:  d.deadLetter,
	}
	if cfg.Rate > 0 { // one bucket for all deliveries; RetryAfter never pauses it
		b, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
		if err != nil {
			return nil, err
		}
		base.Limiter = b
	}
	fifo, conc := base, base
	fifo.Workers, conc.Workers = cfg.FIFOWorkers, cfg.Workers
	if cfg.Store != nil { // -postgres: messages, leases and dead letters in the database
		fifo.Store, fifo.LeaseTTL, fifo.Name = cfg.Store, cfg.LeaseTTL, fifoQueue
		conc.Store, conc.LeaseTTL, conc.Name = cfg.Store, cfg.LeaseTTL, concurrentQueue
	}
	var err error
	if d.fifo, err = pacer.New(fifo, d.handle); err != nil {
		return nil, err
	}
	if d.concurrent, err = pacer.New(conc, d.handle); err != nil {
		return nil, errors.Join(err, d.fifo.Shutdown(context.Background()))
	}
	return d, nil
}

// handle is the Runners' handler: one attempt at one message. A failed
// attempt returns pacer.RetryAfter with the schedule's delay; the last one
// pacer.Permanent: the Runner hands the message to OnDrop (the dead
// letters) before the key's next message.
func (d *dispatcher) handle(ctx context.Context, k key, batch []message) error {
	m := batch[0]
	// The Runner counts the handler calls (pacer.Attempt; with a Store
	// across processes and restarts), those that panicked here included,
	// which sent nothing: they use no attempt of the schedule.
	attempt := max(pacer.Attempt(ctx)-d.track.panicked(m), 1)
	d.track.started(k, m, attempt)
	if d.beforeSend != nil {
		d.beforeSend(m) // a panic here is the Runner's to recover
	}
	err := d.post(ctx, m)
	switch {
	case err == nil:
		d.track.finish(m, nil)
		return nil
	case attempt >= d.cfg.Retry.attempts():
		return pacer.Permanent(err)
	}
	return pacer.RetryAfter(err, d.cfg.Retry.delay(attempt))
}

// publish queues ev for every subscription that matches its type and
// returns how many: a FIFO message under its subscription's key, a
// concurrent one under its own. It numbers and queues in one step (under
// d.mu, or in one transaction), so a queue keeps its messages in Seq order.
func (d *dispatcher) publish(ctx context.Context, ev Event) (int, error) {
	var subs []subscription
	for _, s := range d.cfg.Subs {
		if s.matches(ev.Type) {
			subs = append(subs, s)
		}
	}
	if d.cfg.Numbering != nil {
		return d.publishTx(ctx, ev, subs) // postgres.go
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, s := range subs {
		d.seq[s.Name]++
		m := message{Sub: s.Name, Seq: d.seq[s.Name], Event: ev, Published: time.Now()}
		d.track.published(m)
		r, k := d.concurrent, messageKey(s.Name, m.Seq)
		if s.FIFO {
			r, k = d.fifo, fifoKey(s.Name)
		}
		if err := r.Add(ctx, k, m); err != nil {
			d.track.finish(m, pacer.ErrClosed) // not queued: shutting down
			return i, err
		}
	}
	return len(subs), nil
}

// run runs both Runners until ctx ends or shutdown has drained them.
func (d *dispatcher) run(ctx context.Context) error {
	return d.both(func(r *runner) error {
		if err := r.Run(ctx); !errors.Is(err, pacer.ErrClosed) { // ErrClosed: shut down first
			return err
		}
		return nil
	})
}

// shutdown stops intake and delivers what is queued, retries included,
// unless ctx ends first: what is left then goes to OnDrop.
func (d *dispatcher) shutdown(ctx context.Context) error {
	return d.both(func(r *runner) error { return r.Shutdown(ctx) })
}
