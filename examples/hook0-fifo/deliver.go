package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/pacerkit/pacer"
)

// handle is the Runners' handler: one attempt at one message (MaxBatch 1).
// It chooses the delay before the next attempt itself from the two-phase
// schedule, by attempt number, and tells the Runner with pacer.RetryAfter;
// after the last attempt it returns pacer.Permanent, and the Runner hands
// the message to OnDrop, the dead-letter list.
//
// Attempts are the requests sent to the receiver. In the process, the
// tracker counts them per message. pacer.Attempt(ctx) counts the Runner's
// handler calls for the key's head, which also include calls that
// panicked; and at the time of writing the in-process Runner can start a
// strict key's next message with the count of the message before it, when
// another worker leases the key between the Ack and the reset of the count.
//
// With a Store the count must outlive the process: a message published
// (and tried) by one dispatcher may be retried by another, or after a
// restart, whose tracker never saw it and would start again at 1, for
// ever. The engine keeps pacer.Attempt's count with the message, so it is
// the attempt then, less the calls that panicked here (a panic in another
// process uses one attempt).
func (d *dispatcher) handle(ctx context.Context, k key, batch []message) error {
	m := batch[0]
	d.track.started(k, m)
	if d.beforeSend != nil {
		d.beforeSend(m) // a panic here is the Runner's to recover: no request, no attempt used
	}
	attempt := d.track.sent(m)
	if d.stored {
		attempt = max(pacer.Attempt(ctx)-d.track.panicked(m), 1)
	}
	err := d.post(ctx, m)
	if err == nil {
		d.track.delivered(m)
		return nil
	}
	if attempt >= d.retry.attempts() {
		return pacer.Permanent(err)
	}
	return pacer.RetryAfter(err, d.retry.delay(attempt))
}

// fenceHeader carries the fencing token of the lease a delivery was sent
// under (pacer.Fence), with a Store.
const fenceHeader = "X-Hook0-Fence"

// post sends m to its subscription once, signed, and returns an error
// unless the receiver answered 2xx.
func (d *dispatcher) post(ctx context.Context, m message) error {
	body, err := json.Marshal(delivery{Subscription: m.Sub, Sequence: m.Seq, Event: m.Event})
	if err != nil {
		return pacer.Permanent(err)
	}
	url, ok := d.urls[m.Sub]
	if !ok { // stored by a dispatcher with other subscriptions
		return pacer.Permanent(fmt.Errorf("no subscription %q here", m.Sub))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return pacer.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hook0-Event-Id", m.Event.ID)
	req.Header.Set("X-Hook0-Sequence", strconv.FormatUint(m.Seq, 10))
	if f, ok := pacer.Fence(ctx); ok {
		// With a Store: the lease's token, which grows with every holder
		// of the subscription, so that a receiver can refuse a stale one.
		req.Header.Set(fenceHeader, strconv.FormatUint(f, 10))
	}
	if len(d.secret) > 0 {
		req.Header.Set(signatureHeader, sign(d.secret, time.Now(), body))
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
