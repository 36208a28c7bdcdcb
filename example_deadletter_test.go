package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacerkit/pacer"
)

// OnDrop as a dead-letter hook: a batch the Runner gives up on, after a
// Permanent error or its last attempt, goes to OnDrop with the reason, and
// in strict mode before the next value of its key runs.
func Example_deadLetter() {
	r, err := pacer.New(pacer.Config[string, string]{
		MaxBatch: 1,
		Retry:    pacer.Backoff{Initial: time.Millisecond, Attempts: 2},
		OnDrop: func(sub string, msgs []string, err error) {
			fmt.Printf("dead letter: %s %v: %v\n", sub, msgs, err)
		},
	}, func(_ context.Context, sub string, msg []string) error {
		switch msg[0] {
		case "malformed":
			return pacer.Permanent(errors.New("400 Bad Request"))
		case "unlucky":
			return errors.New("503 Service Unavailable")
		}
		fmt.Println("delivered", sub, msg[0])
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, msg := range []string{"hello", "malformed", "unlucky", "bye"} {
		_ = r.Add(ctx, "sub-1", msg)
	}
	// With no Run, Shutdown runs the workers itself until all is done.
	if err := r.Shutdown(ctx); err != nil {
		panic(err)
	}
	// Output:
	// delivered sub-1 hello
	// dead letter: sub-1 [malformed]: permanent: 400 Bad Request
	// dead letter: sub-1 [unlucky]: 503 Service Unavailable
	// delivered sub-1 bye
}
