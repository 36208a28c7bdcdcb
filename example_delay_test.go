package pacer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer"
)

// Delayed values: a reminder added with AddAfter runs at its time, and the
// values of its key added after it wait behind it, so the key's order
// holds.
func ExampleRunner_AddAfter() {
	done := make(chan struct{})
	r, err := pacer.New(pacer.Config[string, string]{}, func(_ context.Context, user string, msgs []string) error {
		fmt.Println(user, msgs)
		if msgs[len(msgs)-1] == "bye" {
			close(done)
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	go func() { _ = r.Run(ctx) }()

	_ = r.Add(ctx, "ann", "welcome")
	_ = r.AddAfter(ctx, "ann", "reminder", 30*time.Millisecond)
	_ = r.Add(ctx, "ann", "bye") // behind the reminder

	<-done
	_ = r.Shutdown(ctx)
	// Output:
	// ann [welcome]
	// ann [reminder bye]
}
