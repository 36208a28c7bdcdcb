package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
)

// Strict order with ExhaustedHold: a value that used up its attempts holds
// its key, with the values behind it, until Release puts it back at the
// tail of the queue with fresh attempts. Other keys go on meanwhile.
func Example_strictHold() {
	var fixed atomic.Bool
	held := make(chan string, 1)
	r, err := pacer.New(pacer.Config[string, int]{
		MaxBatch:  1,
		Retry:     pacer.Backoff{Initial: time.Millisecond, Attempts: 2},
		Exhausted: pacer.ExhaustedHold,
		OnEvent: func(e pacer.Event[string]) {
			if e.Kind == pacer.EventHeld {
				fmt.Printf("%s held after %d attempts, %d behind: %v\n", e.Key, e.Attempt, e.Behind, e.Err)
				held <- e.Key
			}
		},
	}, func(_ context.Context, sub string, msg []int) error {
		if msg[0] == 2 && !fixed.Load() {
			return errors.New("receiver rejects 2")
		}
		fmt.Println(sub, msg[0], "delivered")
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		_ = r.Add(ctx, "sub-1", i)
	}
	go r.Run(ctx)

	key := <-held
	st, _ := r.Stats(ctx)
	fmt.Println("held keys:", st.Held, "values waiting:", st.Queued)

	fixed.Store(true) // e.g. an operator fixed the receiver
	fmt.Println("release", key)
	if ok, _ := r.Release(ctx, key); !ok {
		panic("the key was not held")
	}
	_ = r.Shutdown(ctx)
	// Output:
	// sub-1 1 delivered
	// sub-1 held after 2 attempts, 1 behind: receiver rejects 2
	// held keys: 1 values waiting: 2
	// release sub-1
	// sub-1 2 delivered
	// sub-1 3 delivered
}
