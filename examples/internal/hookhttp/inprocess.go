package hookhttp

import (
	"net/http"
	"net/http/httptest"
)

// InProcess is an http.RoundTripper that serves every request with
// Handler, without sockets, so that a whole program run fits in a
// testing/synctest bubble on fake time.
type InProcess struct{ Handler http.Handler }

// RoundTrip serves r with the handler. Like a real transport, it returns
// the request's ctx error if that ended while the handler ran.
func (t InProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	in := r.Clone(r.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.Handler.ServeHTTP(rec, in)
	in.Body.Close()
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}
