package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The edits main posts, on fake time: each user's edits reach the handler
// in one call once the user is quiet, users in the order they went quiet,
// a call every half second; after Shutdown the webhook answers 503.
func TestQuickstart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		r, err := newRunner(&out)
		require.NoError(t, err)
		go r.Run(t.Context())
		hook := webhook(r)
		post := func(user, edit string) int {
			rec := httptest.NewRecorder()
			hook.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/edits/"+user, strings.NewReader(edit)))
			return rec.Code
		}
		for _, e := range edits {
			require.Equal(t, http.StatusAccepted, post(e[0], e[1]))
			time.Sleep(10 * time.Millisecond) // as a request over the network takes
		}
		time.Sleep(2 * time.Second)
		require.NoError(t, r.Shutdown(t.Context()))
		require.Equal(t, http.StatusServiceUnavailable, post("bob", "late"))
		require.Equal(t, ""+
			" 300ms  bob: [\"due date\"]\n"+
			" 800ms  carol: [\"estimate\"]\n"+
			"  1.3s  alice: [\"title\" \"priority\" \"title again\"]\n", out.String())
	})
}
