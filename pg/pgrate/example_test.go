package pgrate_test

import (
	"context"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/ratelimit"
)

// One remote API's quota, 3 requests a second for every instance of a
// service that runs on PostgreSQL alone: the same Bucket paces a Runner's
// calls and the requests they make, and a 429 with Retry-After that any
// instance receives pauses all of them.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://127.0.0.1:5432/app")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	notion, err := pgrate.NewBucket(ctx, pool, pgrate.BucketConfig{Rate: 3, Burst: 3, Name: "notion"})
	if err != nil {
		panic(err)
	}
	s, err := pgstore.New(ctx, pool, pgstore.Config{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	client := &http.Client{Transport: &ratelimit.Transport{Limiter: notion}}
	r, err := pacer.New(pacer.Config[string, string]{Store: s, Limiter: notion},
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
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://127.0.0.1:5432/app")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	accounts, err := pgrate.NewKeyed(ctx, pool, pgrate.KeyedConfig{Rate: 10, Burst: 10, Name: "accounts"})
	if err != nil {
		panic(err)
	}
	clientFor := func(account string) *http.Client {
		return &http.Client{Transport: &ratelimit.Transport{Limiter: accounts.For(account)}}
	}
	_, _ = clientFor("acct-42").Get("https://api.example.com/v1/me")
}
