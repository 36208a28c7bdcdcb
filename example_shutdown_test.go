package pacer_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
)

// Shutdown on a signal: the signal ends Run's ctx, which pauses the Runner
// and drops nothing, then Shutdown handles everything accepted, the bursts
// still debouncing included, within its deadline. If the deadline passes
// first, Shutdown hands what is left to OnDrop and says how many values
// that was.
func Example_shutdownOnSignal() {
	// In a program the signal ends ctx:
	//
	//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	//	defer stop()
	ctx, sigterm := context.WithCancel(context.Background())

	var mu sync.Mutex
	var recomputed []string
	r, err := pacer.New(pacer.Config[string, string]{Debounce: time.Minute},
		func(_ context.Context, user string, edits []string) error {
			mu.Lock()
			defer mu.Unlock()
			recomputed = append(recomputed, fmt.Sprint(user, " ", edits))
			return nil
		})
	if err != nil {
		panic(err)
	}
	go r.Run(ctx)

	// The webhook handler adds the users' edits.
	_ = r.Add(ctx, "alice", "title")
	_ = r.Add(ctx, "alice", "due date")
	_ = r.Add(ctx, "bob", "title")

	sigterm() // Run returns context.Canceled; the edits stay in the Runner

	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Shutdown(shutdownCtx); err != nil {
		fmt.Println(err)
	}
	slices.Sort(recomputed) // alice and bob went quiet at about the same time
	for _, s := range recomputed {
		fmt.Println(s)
	}
	st, _ := r.Stats(shutdownCtx)
	fmt.Println("handled", st.Handled, "dropped", st.Dropped)
	// Output:
	// alice [title due date]
	// bob [title]
	// handled 3 dropped 0
}
