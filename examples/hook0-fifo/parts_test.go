package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
)

func TestSchedule(t *testing.T) {
	s := schedule{Fast: 3, FastDelay: 25 * time.Millisecond, Slow: 2, SlowDelay: 250 * time.Millisecond}
	require.Equal(t, 6, s.attempts())
	var got []time.Duration
	for n := 1; n < s.attempts(); n++ {
		got = append(got, s.delay(n))
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{25 * ms, 50 * ms, 100 * ms, 250 * ms, 250 * ms}, got)
	require.Equal(t, 675*ms, s.span())
	require.NoError(t, s.validate())
	require.Error(t, schedule{Fast: 1}.validate())
	require.Error(t, schedule{Slow: -1}.validate())
	require.NoError(t, schedule{}.validate(), "no retries at all is valid")
}

func TestSignature(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"sequence":1}`)
	at := time.Unix(1700000000, 0)
	h := sign(secret, at, body)
	require.True(t, strings.HasPrefix(h, "t=1700000000,v1="), h)
	require.NoError(t, verify(secret, h, body, at))
	require.ErrorIs(t, verify(secret, h, []byte(`{"sequence":2}`), at), errSignatureMismatch, "tampered body")
	require.ErrorIs(t, verify([]byte("other"), h, body, at), errSignatureMismatch, "wrong secret")
	require.ErrorIs(t, verify(secret, strings.Replace(h, "t=1700000000", "t=1700000001", 1), body, at), errSignatureMismatch, "tampered timestamp")
	require.ErrorIs(t, verify(secret, "", body, at), errSignatureMalformed)
	require.ErrorIs(t, verify(secret, "t=soon,v1=00", body, at), errSignatureMalformed)
}

// A signature is good for signatureTolerance either way of the receiver's
// clock: an older one may be a replay, a newer one was not made now.
func TestSignatureTolerance(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"sequence":1}`)
	at := time.Unix(1700000000, 0)
	h := sign(secret, at, body)
	for _, tc := range []struct {
		name string
		now  time.Time
		want error
	}{
		{"at once", at, nil},
		{"5 minutes later", at.Add(5 * time.Minute), nil},
		{"5 minutes earlier", at.Add(-5 * time.Minute), nil},
		{"a second too late", at.Add(5*time.Minute + time.Second), errSignatureTooOld},
		{"a year later", at.AddDate(1, 0, 0), errSignatureTooOld},
		{"a second too early", at.Add(-5*time.Minute - time.Second), errSignatureTooNew},
	} {
		require.ErrorIs(t, verify(secret, h, body, tc.now), tc.want, tc.name)
	}
	require.ErrorIs(t, verify([]byte("other"), h, body, at.AddDate(1, 0, 0)), errSignatureMismatch,
		"a forged signature is refused as such, whatever its timestamp")
}

// The receiver refuses a delivery whose signature is outside the tolerance
// of its clock with 401 and says why; it counts it as a bad signature.
func TestReceiverRefusesReplays(t *testing.T) {
	secret := []byte("s3cret")
	body := `{"subscription":"a","sequence":1,"event":{"id":"e","type":"x"}}`
	signed := time.Unix(1700000000, 0)
	sig := sign(secret, signed, []byte(body))
	for _, tc := range []struct {
		name   string
		now    time.Time
		status int
		reason string
	}{
		{"fresh", signed.Add(time.Minute), http.StatusOK, ""},
		{"a year old", signed.Add(365 * 24 * time.Hour), http.StatusUnauthorized, "signed 8760h0m0s before this receiver's clock, more than 5m0s: refused as a possible replay"},
		{"from the future", signed.Add(-time.Hour), http.StatusUnauthorized, "signed 1h0m0s after this receiver's clock, more than 5m0s"},
	} {
		rc := newReceiver(receiverConfig{Secret: secret, Now: func() time.Time { return tc.now }})
		r := httptest.NewRequest(http.MethodPost, "/hooks/a", strings.NewReader(body))
		r.Header.Set(signatureHeader, sig)
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, r)
		require.Equal(t, tc.status, w.Code, tc.name)
		require.Contains(t, w.Body.String(), tc.reason, tc.name)
		_, badSig, _ := rc.snapshot()
		require.Equal(t, tc.status != http.StatusOK, badSig == 1, tc.name)
	}
}

func TestParseSubscription(t *testing.T) {
	s, err := parseSubscription("billing,https://example.com/hook,invoice.*|order.paid,fifo")
	require.NoError(t, err)
	require.Equal(t, subscription{Name: "billing", URL: "https://example.com/hook", Types: []string{"invoice.*", "order.paid"}, FIFO: true}, s)
	for typ, want := range map[string]bool{"invoice.paid": true, "invoice.": true, "order.paid": true, "order.created": false, "invoices.x": false, "invoice": false} {
		require.Equal(t, want, s.matches(typ), typ)
	}
	all, err := parseSubscription("all,http://127.0.0.1:9000/hooks/all,*,concurrent")
	require.NoError(t, err)
	require.False(t, all.FIFO)
	require.True(t, all.matches("anything"))

	for _, bad := range []string{
		"billing,https://example.com/hook,invoice.*",      // no mode
		"billing,https://example.com/hook,invoice.*,lifo", // bad mode
		",https://example.com/hook,*,fifo",                // no name
		"bill/ing,https://example.com/hook,*,fifo",        // slash in name
		"billing,example.com/hook,*,fifo",                 // not absolute
		"billing,https://example.com/hook,a||b,fifo",      // empty type
	} {
		_, err := parseSubscription(bad)
		require.Error(t, err, bad)
	}
}

func TestFIFOViolation(t *testing.T) {
	for _, tc := range []struct {
		name string
		box  inbox
		want string
	}{
		{"in order, with retries and a skipped message", inbox{requests: []uint64{1, 2, 2, 3, 3, 4}, accepted: []uint64{1, 2, 4}, maxInFlight: 1}, ""},
		{"nothing", inbox{}, ""},
		{"overlap", inbox{requests: []uint64{1, 2}, accepted: []uint64{1, 2}, maxInFlight: 2}, "2 requests in flight at once"},
		{"went back", inbox{requests: []uint64{1, 2, 1}, accepted: []uint64{2}, maxInFlight: 1}, "request for #1 after #2"},
		{"accepted twice", inbox{requests: []uint64{1, 1}, accepted: []uint64{1, 1}, maxInFlight: 1}, "#1 accepted after #1"},
	} {
		require.Equal(t, tc.want, tc.box.fifoViolation(), tc.name)
	}
	require.Equal(t, 2, inbox{accepted: []uint64{2, 1, 4, 3, 5}}.reordered())
}

// TestIsolationCheck shows that the isolation check fails when others
// waited long for a worker while a subscription was blocked, or when
// nothing else was delivered meanwhile.
func TestIsolationCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wait      time.Duration
		meanwhile int // outcomes of the others while legacy's head was failing
		ok        bool
	}{
		{"isolated", 10 * time.Millisecond, 1, true},
		{"others waited", 600 * time.Millisecond, 1, false},
		{"nothing else delivered meanwhile", 10 * time.Millisecond, 0, false},
	} {
		blocked := subStats{sub: subscription{Name: "legacy", FIFO: true}, blocked: time.Second, meanwhile: tc.meanwhile}
		other := subStats{sub: subscription{Name: "orders", FIFO: true}, maxWait: tc.wait}
		r := &report{snap: snapshot{subs: []subStats{blocked, other}}}
		r.checkIsolation()
		require.Len(t, r.checks, 1)
		require.Equal(t, tc.ok, r.checks[0].ok, "%s: %s", tc.name, r.checks[0].text)
		require.Equal(t, "legacy", r.blocker)
	}
}

// TestRoutes publishes through the HTTP API of a real run and checks the
// deliveries arrive, signed, at the matching subscriptions only.
func TestRoutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		secret := []byte("s3cret")
		rc := newReceiver(receiverConfig{Secret: secret, Latency: time.Millisecond})
		base := "http://hooks.invalid/hooks/"
		d, err := newDispatcher(dispatcherConfig{
			Subs: []subscription{
				{Name: "orders", URL: base + "orders", Types: []string{"order.*"}, FIFO: true},
				{Name: "all", URL: base + "all", Types: []string{"*"}},
			},
			Retry:  schedule{Fast: 1, FastDelay: time.Second},
			Secret: secret, Transport: hookhttp.InProcess{Handler: rc},
		})
		require.NoError(t, err)
		h := routes(d)
		post := func(body string) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/events", strings.NewReader(body)))
			return w
		}
		w := post(`{"id":"e1","type":"order.paid","payload":{"total":3}}`)
		require.Equal(t, http.StatusAccepted, w.Code)
		require.JSONEq(t, `{"id":"e1","deliveries":2}`, w.Body.String())
		w = post(`{"type":"user.created"}`)
		require.Equal(t, http.StatusAccepted, w.Code)
		require.Contains(t, w.Body.String(), `"deliveries":1`)
		require.Equal(t, http.StatusBadRequest, post(`{"payload":{}}`).Code, "no type")
		require.Equal(t, http.StatusBadRequest, post(`not json`).Code)

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.run(ctx) }()
		require.NoError(t, d.track.waitIdle(t.Context()))
		require.NoError(t, d.shutdown(t.Context()))
		require.NoError(t, <-done)
		cancel()

		boxes, badSig, badReq := rc.snapshot()
		require.Zero(t, badSig)
		require.Zero(t, badReq)
		require.Equal(t, []uint64{1}, boxes["orders"].accepted)
		require.ElementsMatch(t, []uint64{1, 2}, boxes["all"].accepted)

		stats := httptest.NewRecorder()
		h.ServeHTTP(stats, httptest.NewRequest(http.MethodGet, "/stats", nil))
		require.Contains(t, stats.Body.String(), "orders")
		require.Equal(t, http.StatusServiceUnavailable, post(`{"type":"order.paid"}`).Code, "after shutdown")
	})
}

// TestReceiverRefusesBadSignatures checks that the demo would notice a
// dispatcher signing with the wrong secret.
func TestReceiverRefusesBadSignatures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver(receiverConfig{Secret: []byte("right")})
		d, err := newDispatcher(dispatcherConfig{
			Subs:   []subscription{{Name: "a", URL: "http://hooks.invalid/hooks/a", Types: []string{"*"}, FIFO: true}},
			Retry:  schedule{Fast: 1, FastDelay: time.Second},
			Secret: []byte("wrong"), Transport: hookhttp.InProcess{Handler: rc},
		})
		require.NoError(t, err)
		_, err = d.publish(t.Context(), Event{ID: "e1", Type: "x"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.run(ctx) }()
		require.NoError(t, d.track.waitIdle(t.Context()))
		require.NoError(t, d.shutdown(t.Context()))
		require.NoError(t, <-done)
		cancel()
		rep := newReport(d, rc, 0, -1)
		require.False(t, rep.ok())
		require.Equal(t, 2, rep.badSig, "the first attempt and its one retry")
		require.Len(t, rep.snap.letters, 1)
		require.ErrorContains(t, rep.snap.letters[0].Err, "401")
	})
}

// TestReceiverPrint feeds the receiver by hand, as -receive would be fed,
// and checks its summary tells FIFO from not.
func TestReceiverPrint(t *testing.T) {
	secret := []byte("s3cret")
	rc := newReceiver(receiverConfig{Secret: secret})
	send := func(sub string, seq uint64, sig string) int {
		body := fmt.Sprintf(`{"subscription":%q,"sequence":%d,"event":{"id":"e","type":"x"}}`, sub, seq)
		if sig == "" {
			sig = sign(secret, time.Now(), []byte(body))
		}
		r := httptest.NewRequest(http.MethodPost, "/hooks/"+sub, strings.NewReader(body))
		r.Header.Set(signatureHeader, sig)
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, r)
		return w.Code
	}
	for _, seq := range []uint64{1, 2, 3} {
		require.Equal(t, http.StatusOK, send("a", seq, ""))
	}
	for _, seq := range []uint64{2, 1} {
		require.Equal(t, http.StatusOK, send("b", seq, ""))
	}
	require.Equal(t, http.StatusUnauthorized, send("a", 4, "t=1,v1=00"))
	var out strings.Builder
	rc.print(&out)
	require.Equal(t, "  a: 3 requests, 3 accepted, at most 1 in flight; one request at a time, in sequence order (FIFO held)\n"+
		"  b: 2 requests, 2 accepted, at most 1 in flight; not FIFO: request for #1 after #2\n"+
		"  1 bad signatures, 0 bad requests\n", out.String())
}

// With -postgres the Runners store keys and messages in the engine: a
// message survives the default JSON codec, and keys are strings.
func TestMessageEncodes(t *testing.T) {
	m := message{Sub: "orders", Seq: 7, Event: Event{ID: "evt_007", Type: "order.paid", Payload: []byte(`{"n":7}`)}, Published: time.Unix(1700000000, 5).UTC()}
	var c pacer.JSON[message]
	b, err := c.Encode(m)
	require.NoError(t, err)
	got, err := c.Decode(b)
	require.NoError(t, err)
	require.Equal(t, m, got)
	require.Equal(t, key("analytics#12"), messageKey("analytics", 12))
	require.Equal(t, key("orders"), fifoKey("orders"))
}

func TestFenceViolation(t *testing.T) {
	require.Empty(t, inbox{requests: []uint64{1, 2, 2, 3}, fences: []uint64{4, 4, 9, 9}}.fenceViolation())
	require.Empty(t, inbox{requests: []uint64{1, 2}, fences: []uint64{0, 0}}.fenceViolation(), "no Store, no fences")
	require.Equal(t, "request for #3 with fence 4 after fence 9",
		inbox{requests: []uint64{1, 2, 3}, fences: []uint64{4, 9, 4}}.fenceViolation(), "a stale holder sent after the new one")
}

// span is the time a delivery that always fails spends waiting for retries
// before it is dead-lettered.
func (s schedule) span() time.Duration {
	var d time.Duration
	for n := 1; n < s.attempts(); n++ {
		d += s.delay(n)
	}
	return d
}

// Only the others' outcomes while a FIFO subscription's head is failing
// count as delivered meanwhile: not its own, nor those before its head
// failed or after its outcome.
func TestTrackerMeanwhile(t *testing.T) {
	tr := newTracker([]subscription{{Name: "legacy", FIFO: true}, {Name: "orders", FIFO: true}})
	msg := func(sub string, seq uint64) message { return message{Sub: sub, Seq: seq, Published: time.Now()} }
	l1, o1, o2, o3 := msg("legacy", 1), msg("orders", 1), msg("orders", 2), msg("orders", 3)
	for _, m := range []message{l1, o1, o2, o3} {
		tr.published(m)
	}
	deliver := func(m message) {
		tr.started(fifoKey(m.Sub), m, 1)
		tr.finish(m, nil)
	}
	deliver(o1) // before legacy's head failed
	tr.started(fifoKey("legacy"), l1, 1)
	tr.event(pacer.Event[key]{Kind: pacer.EventRetry, Key: fifoKey("legacy"), Time: time.Now(), Duration: time.Second})
	deliver(o2)                          // while it fails
	tr.finish(l1, errors.New("gave up")) // its own
	deliver(o3)                          // after
	snap := tr.snapshot()
	require.Equal(t, 1, snap.subs[0].meanwhile)
	require.Zero(t, snap.subs[1].meanwhile)
	require.Positive(t, snap.subs[0].blocked)
}
