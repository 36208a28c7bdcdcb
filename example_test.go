package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacerkit/pacer"
)

// Coalescing: the values of a key that arrive within the quiet period reach
// the handler as one batch, and keys run in the order they went quiet.
func Example_coalesce() {
	done := make(chan struct{})
	calls := 0
	r, err := pacer.New(pacer.Config[string, string]{Debounce: 20 * time.Millisecond},
		func(_ context.Context, user string, edits []string) error {
			fmt.Println(user, edits)
			if calls++; calls == 2 {
				close(done)
			}
			return nil
		})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	go func() { _ = r.Run(ctx) }()

	_ = r.Add(ctx, "bob", "title")
	_ = r.Add(ctx, "alice", "title")
	_ = r.Add(ctx, "alice", "due date")
	_ = r.Add(ctx, "alice", "assignee")

	<-done
	_ = r.Shutdown(ctx)
	// Output:
	// bob [title]
	// alice [title due date assignee]
}

// Strict order: one value per call, and a failing value is retried before
// the next value of its key runs.
func Example_strict() {
	done := make(chan struct{})
	r, err := pacer.New(pacer.Config[string, int]{
		MaxBatch: 1,
		Retry:    pacer.Backoff{Initial: time.Millisecond},
	}, func(ctx context.Context, sub string, msg []int) error {
		if msg[0] == 2 && pacer.Attempt(ctx) == 1 {
			fmt.Println(sub, msg[0], "failed, attempt", pacer.Attempt(ctx))
			return errors.New("receiver down")
		}
		fmt.Println(sub, msg[0], "delivered, attempt", pacer.Attempt(ctx))
		if msg[0] == 3 {
			close(done)
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		_ = r.Add(ctx, "sub-1", i) // buffered until Run starts
	}
	go func() { _ = r.Run(ctx) }()

	<-done
	_ = r.Shutdown(ctx)
	// Output:
	// sub-1 1 delivered, attempt 1
	// sub-1 2 failed, attempt 1
	// sub-1 2 delivered, attempt 2
	// sub-1 3 delivered, attempt 1
}
