package pacer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

// The program the README opens with: the body of this Example is its main,
// and TestREADMEProgram keeps the two the same.
func Example() {
	// At most 3 calls a second to the remote API, for all users together.
	api, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 3, Burst: 3})
	if err != nil {
		log.Fatal(err)
	}
	// Recompute a user's plan once their edits go quiet for 10 s (a minute
	// at most), one call per user at a time.
	r, err := pacer.New(pacer.Config[string, string]{
		Debounce: 10 * time.Second,
		MaxWait:  time.Minute,
		Limiter:  api,
	}, func(ctx context.Context, user string, edits []string) error {
		// edits: every edit since the user's last call, in order.
		fmt.Println("recompute", user, edits)
		return nil // an error would retry the batch, with backoff
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	go r.Run(ctx)

	// A webhook handler would Add each event under its key.
	for _, e := range [][2]string{{"alice", "title"}, {"bob", "title"}, {"alice", "due date"}} {
		if err := r.Add(ctx, e[0], e[1]); err != nil {
			log.Fatal(err)
		}
	}

	// Shutdown queues the bursts still debouncing and handles everything.
	if err := r.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	// Unordered output:
	// recompute alice [title due date]
	// recompute bob [title]
}
