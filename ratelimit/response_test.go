package ratelimit_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

func TestCheckResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in30s := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
		for _, tc := range []struct {
			status     int
			retryAfter string
			want       error
		}{
			{status: 200, retryAfter: "5"},
			{status: 500, retryAfter: "5"},
			{status: 429, retryAfter: "5", want: &ratelimit.LimitError{StatusCode: 429, RetryAfter: 5 * time.Second}},
			{status: 503, retryAfter: in30s, want: &ratelimit.LimitError{StatusCode: 503, RetryAfter: 30 * time.Second}},
			{status: 429, want: &ratelimit.LimitError{StatusCode: 429}},
			{status: 429, retryAfter: "-1", want: &ratelimit.LimitError{StatusCode: 429}},
			{status: 429, retryAfter: "7200", want: &ratelimit.LimitError{StatusCode: 429}},
		} {
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
			if tc.retryAfter != "" {
				resp.Header.Set("Retry-After", tc.retryAfter)
			}
			require.Equal(t, tc.want, ratelimit.CheckResponse(resp), "%d %q", tc.status, tc.retryAfter)
		}
		require.NoError(t, ratelimit.CheckResponse(nil))
	})
}

func TestLimitErrorMessage(t *testing.T) {
	require.EqualError(t, &ratelimit.LimitError{StatusCode: 429, RetryAfter: 2 * time.Second},
		"ratelimit: server answered 429 Too Many Requests, retry after 2s")
	require.EqualError(t, &ratelimit.LimitError{StatusCode: 503},
		"ratelimit: server answered 503 Service Unavailable")
}
