package pacer_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

// Limiter with Transport: one bucket paces the handler calls and the
// requests they make. A call waits for a token before it starts and its
// first request goes out on that token. A 429 that the Transport hands back
// becomes, in one line, an error that pauses the bucket for every key and
// retries this one after the Retry-After.
func Example_limiterWithTransport() {
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "recomputed ", r.URL.Path)
	}))
	defer api.Close()

	bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 3, Burst: 3})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &ratelimit.Transport{
		Base:    api.Client().Transport,
		Limiter: bucket, // the same bucket as the Runner's
		// The default retries a 429 three times before handing it back;
		// none here, to show what the handler does then.
		MaxRetries: -1,
	}}
	done := make(chan struct{})
	r, err := pacer.New(pacer.Config[string, string]{Limiter: bucket},
		func(ctx context.Context, user string, _ []string) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/plans/"+user, nil)
			if err != nil {
				return pacer.Permanent(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if err := ratelimit.CheckResponse(resp); err != nil {
				fmt.Println("attempt", pacer.Attempt(ctx), "->", err)
				return err
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			fmt.Println("attempt", pacer.Attempt(ctx), "->", string(body))
			close(done)
			return nil
		})
	if err != nil {
		panic(err)
	}
	start := time.Now()
	ctx := context.Background()
	_ = r.Add(ctx, "alice", "edit")
	go func() { _ = r.Run(ctx) }()

	<-done
	_ = r.Shutdown(ctx)
	fmt.Println("retried after the Retry-After:", time.Since(start) >= time.Second)
	fmt.Println("requests:", hits.Load())
	// Output:
	// attempt 1 -> ratelimit: server answered 429 Too Many Requests, retry after 1s
	// attempt 2 -> recomputed /plans/alice
	// retried after the Retry-After: true
	// requests: 2
}
