package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
)

func TestWebhook(t *testing.T) {
	secret := []byte("s3cret")
	page := []byte(`{"type":"page.content_updated","entity":{"id":"p1","type":"page"}}`)
	db := []byte(`{"type":"database.schema_updated","entity":{"id":"d1","type":"database"}}`)
	badID := []byte(`{"type":"page.created","entity":{"id":"../x","type":"page"}}`)
	handshake := []byte(`{"verification_token":"attacker-chosen"}`)
	cases := []struct {
		name    string
		secret  []byte
		body    []byte
		sig     string
		stopped bool
		status  int
		queued  bool
		logs    string // the log must contain it
		noLogs  string // the log must not contain it
	}{
		{name: "page change", secret: secret, body: page, sig: hookhttp.Sign(secret, page), status: 200, queued: true},
		{name: "not a page", secret: secret, body: db, sig: hookhttp.Sign(secret, db), status: 200},
		{name: "bad signature", secret: secret, body: page, sig: hookhttp.Sign([]byte("x"), page), status: 401},
		{name: "no signature", secret: secret, body: page, status: 401},
		{name: "unsigned handshake with a secret set", secret: secret, body: handshake, status: 401, noLogs: "attacker-chosen"},
		{name: "signed handshake with a secret set", secret: secret, body: handshake, sig: hookhttp.Sign(secret, handshake), status: 200, noLogs: "attacker-chosen"},
		{name: "handshake without a secret", body: handshake, status: 200, logs: `set it as the secret" token=attacker-chosen`},
		{name: "unsigned bad JSON with a secret set", secret: secret, body: []byte("{"), status: 401},
		{name: "signed bad JSON", secret: secret, body: []byte("{"), sig: hookhttp.Sign(secret, []byte("{")), status: 400},
		{name: "bad JSON without a secret", body: []byte("{"), status: 400},
		{name: "page change without a secret", body: page, status: 200, queued: true},
		{name: "bad page id", secret: secret, body: badID, sig: hookhttp.Sign(secret, badID), status: 400},
		{name: "too large", secret: secret, body: bytes.Repeat([]byte(" "), maxBody+1), status: 413},
		{name: "stopped", secret: secret, body: page, sig: hookhttp.Sign(secret, page), stopped: true, status: 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := openQueue(t.TempDir())
			require.NoError(t, err)
			var logs bytes.Buffer
			var notified []string
			h := &webhook{secret: c.secret, q: q, log: slog.New(slog.NewTextHandler(&logs, nil)),
				notify: func(_ context.Context, id string) error { notified = append(notified, id); return nil }}
			if c.stopped {
				h.stop()
			}
			req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(c.body))
			if c.sig != "" {
				req.Header.Set(hookhttp.SignatureHeader, c.sig)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, c.status, rec.Code, rec.Body.String())
			n, err := q.len()
			require.NoError(t, err)
			if c.queued {
				require.Equal(t, 1, n, "the change is on disk before the answer")
				require.Equal(t, []string{"p1"}, notified, "the Runner is told")
			} else {
				require.Zero(t, n)
				require.Empty(t, notified)
			}
			if c.logs != "" {
				require.Contains(t, logs.String(), c.logs)
			}
			if c.noLogs != "" {
				require.NotContains(t, logs.String(), c.noLogs)
			}
		})
	}
}
