package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
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
	// With -postgres: both Runners' state in Store, each under a queue
	// Name of its own that the dispatchers on the schema share; the
	// messages numbered in the database; and how long a dispatcher that
	// died keeps a subscription from the others (0: pacer's default).
	Store     store.Store
	Numbering *numbering
	LeaseTTL  time.Duration
}

// A dispatcher fans every published event out to the subscriptions that
// match it and delivers the messages through two Runners (newDispatcher).
type dispatcher struct {
	cfg        dispatcherConfig
	fifo       *runner
	concurrent *runner
	track      *tracker
	client     *http.Client
	beforeSend func(m message) // runs before every attempt; the demo panics in it once

	mu  sync.Mutex
	seq map[string]uint64 // last sequence number per subscription
}

type runner = pacer.Runner[key, message]

// A key names what a Runner serialises: a FIFO subscription ("orders"),
// or one message of a concurrent subscription ("analytics#12"). A string,
// so that a Runner with a Store encodes it without a KeyCodec.
type key string

func fifoKey(sub string) key { return key(sub) }

func messageKey(sub string, seq uint64) key { return key(sub + "#" + strconv.FormatUint(seq, 10)) }

// An Event is something that happened in the publishing application, e.g.
// an order was paid.
type Event struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// A message is one event on its way to one subscription; Seq numbers a
// subscription's messages 1, 2, 3... in publish order. With -postgres the
// Runners store it JSON-encoded, so its fields are exported.
type message struct {
	Sub       string    `json:"sub"`
	Seq       uint64    `json:"seq"`
	Event     Event     `json:"event"`
	Published time.Time `json:"published"`
}

// A delivery is the body POSTed to a subscription's URL.
type delivery struct {
	Subscription string `json:"subscription"`
	Sequence     uint64 `json:"sequence"`
	Event        Event  `json:"event"`
}

// fenceHeader carries, with a Store, the fencing token of the lease a
// delivery was sent under (pacer.Fence): it grows with every holder of a
// subscription, so that a receiver can refuse a holder that was replaced.
const fenceHeader = "X-Hook0-Fence"

// post sends m to its subscription once, signed, and returns an error
// unless the receiver answered 2xx.
func (d *dispatcher) post(ctx context.Context, m message) error {
	i := slices.IndexFunc(d.cfg.Subs, func(s subscription) bool { return s.Name == m.Sub })
	if i < 0 { // stored by a dispatcher with other subscriptions
		return pacer.Permanent(fmt.Errorf("no subscription %q here", m.Sub))
	}
	body, err := json.Marshal(delivery{Subscription: m.Sub, Sequence: m.Seq, Event: m.Event})
	if err != nil {
		return pacer.Permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.cfg.Subs[i].URL, bytes.NewReader(body))
	if err != nil {
		return pacer.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hook0-Event-Id", m.Event.ID)
	req.Header.Set("X-Hook0-Sequence", strconv.FormatUint(m.Seq, 10))
	if f, ok := pacer.Fence(ctx); ok {
		req.Header.Set(fenceHeader, strconv.FormatUint(f, 10))
	}
	if len(d.cfg.Secret) > 0 {
		req.Header.Set(signatureHeader, sign(d.cfg.Secret, time.Now(), body))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", m.Sub, resp.Status)
	}
	return nil
}

// deadLetter is the Runners' OnDrop: a message that used up its attempts
// (or that a cut-short shutdown left) joins the dead letters.
func (d *dispatcher) deadLetter(_ key, batch []message, err error) {
	for _, m := range batch {
		d.track.dead(m, err)
		d.cfg.Logger.Warn("dead-lettered", "subscription", m.Sub, "seq", m.Seq, "event", m.Event.ID, "err", err)
	}
}

// both calls f on both Runners at once and joins their errors.
func (d *dispatcher) both(f func(*runner) error) error {
	var wg sync.WaitGroup
	var errs [2]error
	for i, r := range []*runner{d.fifo, d.concurrent} {
		wg.Go(func() { errs[i] = f(r) })
	}
	wg.Wait()
	return errors.Join(errs[:]...)
}
