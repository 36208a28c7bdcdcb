package main

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/store"
)

// With a Store, as -postgres keeps the queues (here a store.Memory), the
// dispatcher serves the console at /pacer/: it lists both queues, says in
// a sentence why the FIFO subscription "legacy" waits (its receiver is
// down, its retry is an hour away), and takes an operator's actions from
// this machine: pause the queue and resume it, then retry "legacy" now,
// once its receiver is back, without waiting out the hour. The same
// action from another machine is refused.
func TestConsole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver(receiverConfig{Latency: time.Millisecond, Down: map[string]time.Duration{"legacy": 10 * time.Minute}})
		d, err := newDispatcher(dispatcherConfig{
			Subs:      []subscription{{Name: "legacy", URL: "http://hooks.invalid/hooks/legacy", Types: []string{"*"}, FIFO: true}},
			Retry:     schedule{Fast: 1, FastDelay: time.Hour},
			Transport: hookhttp.InProcess{Handler: rc},
			Store:     store.NewMemory(store.MemoryConfig{}),
		})
		require.NoError(t, err)
		h := routes(d)
		local, remote := operator(t, h, "127.0.0.1:50000"), operator(t, h, "192.0.2.1:50000")
		n, err := d.publish(t.Context(), Event{ID: "e1", Type: "order.paid"})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.run(ctx) }()
		time.Sleep(time.Second) // the first attempt failed: 503

		status, body := local.get("/pacer/?counts=inline")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, "?queue=hook0-fifo")
		require.Contains(t, body, "?queue=hook0-concurrent")
		explain := func() string {
			x, err := d.fifo.Explain(t.Context(), fifoKey("legacy"))
			require.NoError(t, err)
			return x.String()
		}
		status, body = local.get("/pacer/key?queue=hook0-fifo&key=legacy")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, explain(), "retrying")
		require.Contains(t, body, explain())
		require.Contains(t, body, "confirm?do=retry-now")

		status, body = remote.act("do=pause-queue&queue=hook0-fifo")
		require.Equal(t, http.StatusForbidden, status, body)
		require.Contains(t, body, "only from this machine")
		require.NotContains(t, explain(), "paused")
		status, body = local.act("do=pause-queue&queue=hook0-fifo")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `Paused queue "hook0-fifo".`)
		require.Contains(t, explain(), "paused")
		status, body = local.act("do=resume-queue&queue=hook0-fifo")
		require.Equal(t, http.StatusOK, status, body)
		require.NotContains(t, explain(), "paused")

		time.Sleep(11 * time.Minute) // the receiver is back; the retry is due in 49 minutes
		require.Empty(t, accepted(rc))
		status, body = local.act("do=retry-now&key=legacy&queue=hook0-fifo")
		require.Equal(t, http.StatusOK, status, body)
		time.Sleep(time.Second)
		require.Equal(t, []uint64{1}, accepted(rc), "delivered on the operator's retry")

		require.NoError(t, d.shutdown(t.Context()))
		cancel()
		require.NoError(t, <-done)
	})
}

// accepted returns the sequences the receiver accepted for "legacy".
func accepted(rc *receiver) []uint64 {
	boxes, _, _ := rc.snapshot()
	return boxes["legacy"].accepted
}

// A consoleClient is an operator's browser, served by h in the process as
// a client at addr.
type consoleClient struct {
	t *testing.T
	c *http.Client
}

func operator(t *testing.T, h http.Handler, addr string) consoleClient {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return consoleClient{t, &http.Client{Jar: jar, Transport: fromAddr{h, addr}}}
}

// get reads path and returns its status and its body, unescaped.
func (cc consoleClient) get(path string) (int, string) {
	resp, err := cc.c.Get("http://dispatcher.test" + path)
	require.NoError(cc.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(cc.t, err)
	return resp.StatusCode, html.UnescapeString(string(b))
}

// act opens the confirmation of the action in query and submits its form,
// as an operator's two clicks do, and returns what the console answered.
func (cc consoleClient) act(query string) (int, string) {
	status, body := cc.get("/pacer/confirm?" + query)
	require.Equal(cc.t, http.StatusOK, status, body)
	form := regexp.MustCompile(`(?s)<form method="post" action="([^"]+)">.*?name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	require.NotNil(cc.t, form, body)
	resp, err := cc.c.PostForm("http://dispatcher.test"+form[1], url.Values{"csrf": {form[2]}})
	require.NoError(cc.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(cc.t, err)
	return resp.StatusCode, html.UnescapeString(string(b))
}

// fromAddr serves each request with h, in the process, as a server does a
// request from addr.
type fromAddr struct {
	h    http.Handler
	addr string
}

func (f fromAddr) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.RemoteAddr, r.RequestURI = f.addr, r.URL.RequestURI()
	return hookhttp.InProcess{Handler: f.h}.RoundTrip(r)
}
