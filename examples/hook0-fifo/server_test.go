package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
)

// POST /events publishes exactly one JSON value or nothing: trailing data
// or a second value is refused with 400, a body over maxEventBody with
// 413, however early its first value ends, and nothing refused is
// published.
func TestEventsBody(t *testing.T) {
	event := `{"type":"order.paid","payload":{"n":1}}`
	pad := func(n int) string { return strings.Repeat(" ", n) }
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"one object", event, http.StatusAccepted},
		{"one object, whitespace around it", "\n\t " + event + " \r\n", http.StatusAccepted},
		{"exactly the limit", event + pad(maxEventBody-len(event)), http.StatusAccepted},
		{"trailing garbage", `{"type":"order.paid"}GARBAGE`, http.StatusBadRequest},
		{"two objects", event + event, http.StatusBadRequest},
		{"two objects, whitespace between", event + "\n" + event, http.StatusBadRequest},
		{"a second value", event + ` 1`, http.StatusBadRequest},
		{"malformed", `{"type":"order.paid"`, http.StatusBadRequest},
		{"not json", `not json`, http.StatusBadRequest},
		{"empty", ``, http.StatusBadRequest},
		{"null", `null`, http.StatusBadRequest},
		{"an array", `[` + event + `]`, http.StatusBadRequest},
		{"no type", `{"payload":{}}`, http.StatusBadRequest},
		{"one byte over the limit, first object ending early", event + pad(maxEventBody-len(event)+1), http.StatusRequestEntityTooLarge},
		{"over the limit, then garbage", event + pad(maxEventBody) + "GARBAGE", http.StatusRequestEntityTooLarge},
		{"oversized payload", `{"type":"order.paid","payload":"` + strings.Repeat("x", maxEventBody) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { checkEventsBody(t, tc.body, tc.want) }) })
	}
}

// checkEventsBody posts body to a new dispatcher's POST /events, which
// must answer want and publish the event only if it answers 202.
func checkEventsBody(t *testing.T, body string, want int) {
	d, err := newDispatcher(dispatcherConfig{
		Subs:  []subscription{{Name: "all", URL: "http://hooks.invalid/hooks/all", Types: []string{"*"}, FIFO: true}},
		Retry: schedule{Fast: 1, FastDelay: time.Second},
		// The dispatcher does not run: nothing is sent.
		Transport: hookhttp.InProcess{Handler: http.NotFoundHandler()},
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, d.shutdown(t.Context())) }()

	w := httptest.NewRecorder()
	routes(d).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/events", strings.NewReader(body)))
	require.Equal(t, want, w.Code, "answer: %s", w.Body)
	published := 0
	if want == http.StatusAccepted {
		published = 1
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	require.EqualValues(t, published, d.seq["all"], "messages published")
}
