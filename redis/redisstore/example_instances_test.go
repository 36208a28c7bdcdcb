package redisstore_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redismutex"
	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/pacerkit/pacer/redis/redisstore"
)

// A service run as several instances on one Redis: every instance runs
// this same code. The Runner's debounce, queue and leases live in Redis; one
// API quota and its Retry-After pause are shared by every instance; a
// per-account job runs on one instance at a time, at the account's own
// rate, and both guard their writes with a fence.
func Example_severalInstances() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	st, err := redisstore.New(ctx, rdb, redisstore.Config{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	// 3 requests a second for the whole service, however many instances.
	notion, err := redisrate.NewBucket(ctx, rdb, redisrate.BucketConfig{Rate: 3, Burst: 3, Name: "notion"})
	if err != nil {
		panic(err)
	}
	api := &http.Client{Transport: &ratelimit.Transport{Limiter: notion}}

	recompute, err := pacer.New(pacer.Config[string, string]{
		Store:    st,       // debounce, queue, leases and dead letters in Redis
		Name:     "nextup", // the same on every instance
		Debounce: 10 * time.Second,
		MaxWait:  time.Minute,
		Limiter:  notion, // the Runner's token pays for the call's first request
	}, func(ctx context.Context, user string, edits []string) error {
		fence, _ := pacer.Fence(ctx) // grows with every lease of this user
		req, err := http.NewRequestWithContext(ctx, http.MethodPatch,
			"https://api.notion.com/v1/pages/"+user, strings.NewReader(strings.Join(edits, "\n")))
		if err != nil {
			return pacer.Permanent(err)
		}
		req.Header.Set("X-Fence", strconv.FormatUint(fence, 10)) // the API refuses one lower than it has seen
		resp, err := api.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return ratelimit.CheckResponse(resp) // a 429 pauses every instance
	})
	if err != nil {
		panic(err)
	}
	go func() { _ = recompute.Run(ctx) }()
	// Any instance may take the webhook: the edit joins the user's burst.
	_ = recompute.Add(ctx, "user-7", "edited page 12")

	// 40 messages a minute per account, and one fan-out per account at once.
	perAccount, err := redisrate.NewKeyed(ctx, rdb, redisrate.KeyedConfig{Rate: 40.0 / 60, Name: "whatsapp"})
	if err != nil {
		panic(err)
	}
	accounts, err := redismutex.New(ctx, rdb, redismutex.Config{Name: "accounts"})
	if err != nil {
		panic(err)
	}
	defer accounts.Close()
	_ = accounts.Do(ctx, "acct-42", func(ctx context.Context) error {
		fence, _ := redismutex.FenceFrom(ctx) // ctx ends if the lock is lost
		for _, group := range []string{"g1", "g2", "g3"} {
			if err := perAccount.Wait(ctx, "acct-42"); err != nil {
				return err
			}
			sendReminder(ctx, group, fence)
		}
		return nil
	})
}

func sendReminder(context.Context, string, uint64) {}
