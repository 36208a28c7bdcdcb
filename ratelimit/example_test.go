package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/ratelimit"
)

// A 429 seen by one caller pauses the bucket for every caller.
func ExampleBucket_PauseFor() {
	clk := clock.NewMock()
	b, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 2, Burst: 2, Clock: clk})
	if err != nil {
		panic(err)
	}
	fmt.Println("allowed:", b.Allow())

	b.PauseFor(3 * time.Second) // e.g. Retry-After: 3
	fmt.Println("during the pause:", b.Allow())

	clk.Add(3 * time.Second)
	fmt.Println("after it:", b.Allow(), b.Allow(), b.Allow())
	fmt.Println("pauses:", b.Stats().Pauses)
	// Output:
	// allowed: true
	// during the pause: false
	// after it: true true false
	// pauses: 1
}

// With Adaptive, each pause halves the rate and it climbs back step by step.
func ExampleBucketConfig_adaptive() {
	clk := clock.NewMock()
	b, err := ratelimit.NewBucket(ratelimit.BucketConfig{
		Rate: 10, Adaptive: true, RecoverStep: 2, RecoverEvery: time.Minute, Clock: clk,
	})
	if err != nil {
		panic(err)
	}
	b.PauseFor(time.Second)
	fmt.Println(b.Stats().Rate)
	clk.Add(time.Second + 2*time.Minute)
	fmt.Println(b.Stats().Rate)
	// Output:
	// 5
	// 9
}

func ExampleHeaderRetryAfter() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "Sun, 01 Mar 2026 12:00:30 GMT", "Sun, 01 Mar 2026 11:00:00 GMT", "-5", "86400"} {
		h := http.Header{"Retry-After": {v}}
		d, ok := ratelimit.HeaderRetryAfter(h, now)
		fmt.Printf("%-30q %v %v\n", v, d, ok)
	}
	// Output:
	// "120"                          2m0s true
	// "Sun, 01 Mar 2026 12:00:30 GMT" 30s true
	// "Sun, 01 Mar 2026 11:00:00 GMT" 0s true
	// "-5"                           0s false
	// "86400"                        0s false
}

// Per-account and global limits together: a call passes only when both
// allow it.
func ExampleAll() {
	accounts, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1, Burst: 1})
	if err != nil {
		panic(err)
	}
	global, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 100, Burst: 10})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, account := range []string{"alice", "bob"} {
		lim := ratelimit.All(accounts.For(account), global)
		fmt.Println(account, lim.Wait(ctx))
	}
	fmt.Println("alice again, at once:", accounts.Allow("alice"))
	// Output:
	// alice <nil>
	// bob <nil>
	// alice again, at once: false
}

// The Transport waits on the bucket before each request, and on a 429 with
// Retry-After pauses the bucket and retries.
func ExampleTransport() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 3, Burst: 3})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &ratelimit.Transport{Base: base, Limiter: bucket, MaxRetries: 3}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "after", calls.Load(), "calls")
	// Output:
	// 200 after 2 calls
}

// A bucket per account: accounts do not slow each other down, a pause of
// one holds only that one, and idle accounts cost no memory.
func ExampleKeyed() {
	clk := clock.NewMock()
	accounts, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{
		Rate: 1, Burst: 2, IdleTTL: time.Minute, Clock: clk,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(accounts.Allow("alice"), accounts.Allow("alice"), accounts.Allow("alice"))
	accounts.PauseKey("bob", 30*time.Second) // bob's API answered 429
	fmt.Println(accounts.Allow("bob"), accounts.Allow("carol"))
	fmt.Println("buckets:", accounts.Len())

	clk.Add(2 * time.Minute)
	fmt.Println("buckets after two idle minutes:", accounts.Len())
	// Output:
	// true true false
	// false true
	// buckets: 3
	// buckets after two idle minutes: 0
}
