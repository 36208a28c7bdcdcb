package redisrate_test

import (
	"context"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// One remote API's quota, shared by every instance of a service: the same
// Bucket paces a Runner's calls and the requests they make, and a 429
// with Retry-After that any instance receives pauses all of them.
func Example() {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	notion, err := redisrate.NewBucket(ctx, c, redisrate.BucketConfig{Rate: 3, Burst: 3, Name: "notion"})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &ratelimit.Transport{Limiter: notion}}
	r, err := pacer.New(pacer.Config[string, string]{Limiter: notion},
		func(ctx context.Context, page string, _ []string) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPatch, "https://api.notion.com/v1/pages/"+page, nil)
			if err != nil {
				return pacer.Permanent(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			return ratelimit.CheckResponse(resp) // a 429 the Transport gave up on pauses every instance
		})
	if err != nil {
		panic(err)
	}
	_ = r.Run(ctx)
}

// A per-account limit across instances: 10 requests a second per account,
// each account's Transport paced by its own key.
func ExampleKeyed_For() {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	accounts, err := redisrate.NewKeyed(context.Background(), c, redisrate.KeyedConfig{Rate: 10, Burst: 10, Name: "accounts"})
	if err != nil {
		panic(err)
	}
	clientFor := func(account string) *http.Client {
		return &http.Client{Transport: &ratelimit.Transport{Limiter: accounts.For(account)}}
	}
	_, _ = clientFor("acct-42").Get("https://api.example.com/v1/me")
}

// Allow for a decision that must not wait, failing closed when Redis
// cannot be reached.
func ExampleBucket_Allow() {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	ctx := context.Background()
	signups, err := redisrate.NewBucket(ctx, c, redisrate.BucketConfig{Rate: 5, Burst: 20, Name: "signups"})
	if err != nil {
		panic(err)
	}
	if ok, err := signups.Allow(ctx); !ok {
		_ = err // nil: over the limit; not nil: Redis could not be reached
		return
	}
	// handle the signup
}
