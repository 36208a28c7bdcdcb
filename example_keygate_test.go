package pacer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/window"
)

// A rate limit per key: each account may send one message a minute. An
// account without a token is put aside until its token is due, and the
// worker serves the other accounts meanwhile. A mock clock plays the
// minute.
func Example_keyLimit() {
	clk := clock.NewMock()
	perAccount, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1.0 / 60, Clock: clk})
	if err != nil {
		panic(err)
	}
	deferred, sent := make(chan struct{}, 1), make(chan struct{}, 3)
	r, err := pacer.New(pacer.Config[string, string]{
		MaxBatch: 1,
		KeyLimit: perAccount, // redisrate.Keyed shares it among instances
		Clock:    clk,
		OnEvent: func(e pacer.Event[string]) {
			if e.Kind == pacer.EventSkipped {
				fmt.Println(e.Key, "deferred for", e.Delay)
				deferred <- struct{}{}
			}
		},
	}, func(ctx context.Context, account string, msgs []string) error {
		fmt.Println("sent", msgs, "from", account, "at", clk.Now().Format("15:04:05"))
		sent <- struct{}{}
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = r.Add(ctx, "alice", "hello")
	_ = r.Add(ctx, "alice", "again")
	_ = r.Add(ctx, "bob", "hi")
	go r.Run(ctx)
	<-sent
	<-sent
	<-deferred
	clk.Add(time.Minute)
	<-sent
	_ = r.Shutdown(ctx)
	// Output:
	// sent [hello] from alice at 00:00:00
	// sent [hi] from bob at 00:00:00
	// alice deferred for 1m0s
	// sent [again] from alice at 00:01:00
}

// A delivery window per key: each reminder goes out within its user's
// hours, in the user's time zone. A key outside its window is put aside
// until the window opens, without holding a worker; a call still running
// at the close has its ctx cancelled there.
func Example_keyWindow() {
	hours := map[string]string{
		"ana@lisbon": "09:00-18:00 Europe/Lisbon",
		"kai@tokyo":  "09:00-18:00 Asia/Tokyo",
	}
	windows := map[string]*window.Schedule{}
	for user, spec := range hours {
		w, err := window.Parse(spec)
		if err != nil {
			panic(err)
		}
		windows[user] = &w
	}
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) // 10:00 in Lisbon, 19:00 in Tokyo

	deferred, sent := make(chan struct{}, 1), make(chan struct{}, 2)
	r, err := pacer.New(pacer.Config[string, string]{
		KeyWindow: func(user string) *window.Schedule { return windows[user] }, // nil: no window
		Clock:     clk,
		OnEvent: func(e pacer.Event[string]) {
			if e.Kind == pacer.EventSkipped {
				fmt.Println(e.Key, "deferred for", e.Delay)
				deferred <- struct{}{}
			}
		},
	}, func(ctx context.Context, user string, msgs []string) error {
		closes, _ := ctx.Deadline()
		fmt.Println("sent", msgs, "to", user, "at", clk.Now().UTC().Format("15:04"), "UTC, ctx ends at", closes.UTC().Format("15:04"), "UTC")
		sent <- struct{}{}
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = r.Add(ctx, "kai@tokyo", "standup")
	_ = r.Add(ctx, "ana@lisbon", "standup")
	go r.Run(ctx)
	<-deferred
	<-sent
	clk.Add(14 * time.Hour) // 00:00 UTC, 09:00 in Tokyo
	<-sent
	_ = r.Shutdown(ctx)
	// Output:
	// kai@tokyo deferred for 14h0m0s
	// sent [standup] to ana@lisbon at 10:00 UTC, ctx ends at 18:00 UTC
	// sent [standup] to kai@tokyo at 00:00 UTC, ctx ends at 09:00 UTC
}
