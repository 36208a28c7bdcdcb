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
	"net/url"
	"slices"
	"strconv"
	"strings"
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
	// With -postgres: the Runners' Store, the numbering of the messages,
	// and the lease of a subscription (0: pacer's default).
	Store     store.Store
	Numbering *numbering
	LeaseTTL  time.Duration
}

// A schedule is Hook0's retry policy: Fast retries whose delay doubles,
// then Slow ones at a fixed delay; 1 + Fast + Slow attempts in all.
type schedule struct {
	Fast      int           // fast retries
	FastDelay time.Duration // delay before the first fast retry; doubles after each
	Slow      int           // slow retries after the fast ones
	SlowDelay time.Duration // delay before each slow retry
}

func (s schedule) attempts() int { return 1 + s.Fast + s.Slow }

// delay returns the wait after failed attempt n (1 for the first call).
func (s schedule) delay(n int) time.Duration {
	if n <= s.Fast {
		return s.FastDelay << (n - 1)
	}
	return s.SlowDelay
}

func (s schedule) validate() error {
	switch {
	case s.Fast < 0 || s.Fast > 20:
		return fmt.Errorf("-fast must be in [0, 20], got %d", s.Fast)
	case s.Slow < 0:
		return fmt.Errorf("-slow must be >= 0, got %d", s.Slow)
	case s.FastDelay <= 0 && s.Fast > 0:
		return fmt.Errorf("-fast-delay must be > 0, got %v", s.FastDelay)
	case s.SlowDelay <= 0 && s.Slow > 0:
		return fmt.Errorf("-slow-delay must be > 0, got %v", s.SlowDelay)
	}
	return nil
}

// A dispatcher fans every published event out to the subscriptions that
// match it and delivers the messages through two Runners (newDispatcher).
type dispatcher struct {
	cfg        dispatcherConfig
	fifo       *runner
	concurrent *runner
	track      *tracker
	client     *http.Client
	beforeSend func(m message) // runs before every attempt; a test panics in it

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
// subscription's messages 1, 2, 3... Its fields are exported for the JSON
// codec of a Store.
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

// fenceHeader carries, with a Store, the fence of the lease a delivery was
// sent under (pacer.Fence), so that a receiver can refuse a stale holder.
const fenceHeader = "X-Hook0-Fence"

// post sends m to its subscription once, signed, and returns an error
// unless the receiver answered 2xx.
func (d *dispatcher) post(ctx context.Context, m message) error {
	i := slices.IndexFunc(d.cfg.Subs, func(s subscription) bool { return s.Name == m.Sub })
	if i < 0 { // stored by a dispatcher with other subscriptions
		return pacer.Permanent(fmt.Errorf("no subscription %q here", m.Sub))
	}
	body, err := json.Marshal(delivery{Subscription: m.Sub, Sequence: m.Seq, Event: m.Event})
	req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, d.cfg.Subs[i].URL, bytes.NewReader(body))
	if err := errors.Join(err, rerr); err != nil {
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
		d.track.finish(m, err)
		d.cfg.Logger.Warn("dead-lettered", "subscription", m.Sub, "seq", m.Seq, "event", m.Event.ID, "err", err)
	}
}

// both calls f on both Runners at once and joins their errors.
func (d *dispatcher) both(f func(*runner) error) error {
	var wg sync.WaitGroup
	var errs [2]error
	wg.Go(func() { errs[0] = f(d.fifo) })
	wg.Go(func() { errs[1] = f(d.concurrent) })
	wg.Wait()
	return errors.Join(errs[:]...)
}

// A subscription asks for the events of some types to be delivered to one
// URL: one after the other in publish order (FIFO), or concurrently.
type subscription struct {
	Name  string
	URL   string
	Types []string // event types; "*" is every type, "order.*" every type starting with "order."
	FIFO  bool
}

// matches reports whether events of type typ go to s.
func (s subscription) matches(typ string) bool {
	for _, t := range s.Types {
		if t == "*" || t == typ || strings.HasSuffix(t, ".*") && strings.HasPrefix(typ, t[:len(t)-1]) {
			return true
		}
	}
	return false
}

// parseSubscription reads the -sub flag: NAME,URL,TYPES,MODE where TYPES
// is "*" or a |-separated list such as "order.*|invoice.paid", and MODE is
// fifo or concurrent.
func parseSubscription(v string) (subscription, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 4 {
		return subscription{}, fmt.Errorf("-sub %q: want NAME,URL,TYPES,MODE", v)
	}
	s := subscription{Name: parts[0], URL: parts[1], Types: strings.Split(parts[2], "|"), FIFO: parts[3] == "fifo"}
	u, err := url.Parse(s.URL)
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, "/ "):
		return subscription{}, fmt.Errorf("-sub %q: NAME must be non-empty, without spaces or slashes", v)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return subscription{}, fmt.Errorf("-sub %q: URL must be an absolute http(s) URL", v)
	case slices.Contains(s.Types, ""):
		return subscription{}, fmt.Errorf("-sub %q: empty event type", v)
	case !s.FIFO && parts[3] != "concurrent":
		return subscription{}, fmt.Errorf("-sub %q: MODE must be fifo or concurrent", v)
	}
	return s, nil
}
