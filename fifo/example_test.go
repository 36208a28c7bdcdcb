package fifo_test

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/fifo"
)

// A user edited while being processed runs again afterwards, behind the
// users that were already waiting.
func ExampleQueue() {
	q := fifo.NewQueue[string](fifo.QueueConfig{})
	defer q.ShutDown()
	ctx := context.Background()

	q.Add("ann")
	q.Add("bob")
	user, _ := q.Get(ctx)
	fmt.Println("processing", user)
	fmt.Println("edit during processing:", q.Add("ann"))
	fmt.Println("bob again:", q.Add("bob"))
	q.Done(user)

	for q.Len() > 0 {
		user, _ := q.Get(ctx)
		fmt.Println("processing", user)
		q.Done(user)
	}
	// Output:
	// processing ann
	// edit during processing: true
	// bob again: false
	// processing bob
	// processing ann
}

// Draining: consumers keep going until Get reports ErrClosed.
func ExampleQueue_ShutDownWithDrain() {
	q := fifo.NewQueue[int](fifo.QueueConfig{})
	for i := range 3 {
		q.Add(i)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			k, err := q.Get(context.Background())
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Println("done", k)
			q.Done(k)
		}
	}()
	if err := q.ShutDownWithDrain(context.Background()); err != nil {
		fmt.Println(err)
	}
	<-done
	// Output:
	// done 0
	// done 1
	// done 2
	// fifo: closed
}

// Strict per-key order with MaxBatch 1: a failing message is retried at the
// head of its key while other keys proceed.
func ExampleGroups() {
	g, err := fifo.NewGroups[string, string](fifo.GroupsConfig{MaxBatch: 1})
	if err != nil {
		panic(err)
	}
	defer g.ShutDown()
	ctx := context.Background()

	_ = g.Put("sub-A", "A1", "A2")
	_ = g.Put("sub-B", "B1")
	for g.Keys() > 0 {
		l, _ := g.Get(ctx)
		fmt.Println(l.Key, l.Messages, "attempt", l.Attempt)
		if l.Messages[0] == "A1" && l.Attempt == 1 {
			g.Retry(l, 0) // fails once; a real caller would back off
			continue
		}
		g.Ack(l)
	}
	// Output:
	// sub-A [A1] attempt 1
	// sub-B [B1] attempt 1
	// sub-A [A1] attempt 2
	// sub-A [A2] attempt 1
}

// With MaxBatch 0 everything waiting for a key comes in one lease.
func ExampleGroups_coalesce() {
	g, _ := fifo.NewGroups[string, int](fifo.GroupsConfig{})
	defer g.ShutDown()
	_ = g.Put("page", 1)
	_ = g.Put("page", 2, 3)
	l, _ := g.Get(context.Background())
	fmt.Println(l.Key, l.Messages)
	g.Ack(l)
	// Output: page [1 2 3]
}

// Hold keeps a key whose head keeps failing out of rotation, with its
// messages in place, until the operator releases it.
func ExampleGroups_Hold() {
	g, _ := fifo.NewGroups[string, string](fifo.GroupsConfig{MaxBatch: 1})
	defer g.ShutDown()
	ctx := context.Background()

	_ = g.Put("sub-A", "A1", "A2")
	l, _ := g.Get(ctx)
	g.Hold(l) // A1 exhausted its retries
	fmt.Println("held:", g.Held(), "waiting:", g.Len())

	_ = g.Put("sub-B", "B1")
	l, _ = g.Get(ctx) // sub-A is skipped while held
	fmt.Println(l.Key, l.Messages)
	g.Ack(l)

	g.Release("sub-A")
	l, _ = g.Get(ctx)
	fmt.Println(l.Key, l.Messages, "attempt", l.Attempt)
	g.Ack(l)
	// Output:
	// held: [sub-A] waiting: 2
	// sub-B [B1]
	// sub-A [A1] attempt 1
}

// Shutting down: pending retries still come due and are handed out, so
// consumers drain them; Close then takes back what is left, here a held key
// and the message put behind it, in batches of MaxBatch.
func ExampleGroups_Close() {
	g, _ := fifo.NewGroups[string, string](fifo.GroupsConfig{MaxBatch: 1})
	ctx := context.Background()

	_ = g.Put("sub-A", "A1", "A2")
	_ = g.Put("sub-B", "B1")
	g.Hold(mustGet(g)) // A1 exhausted its retries
	g.Retry(mustGet(g), 10*time.Millisecond)
	g.ShutDown()
	for {
		l, err := g.Get(ctx) // waits for B1's retry
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(l.Key, l.Messages, "attempt", l.Attempt, "more:", g.Ack(l))
	}
	fmt.Printf("%+v\n", g.Stats())
	g.Close(func(key string, msgs []string) {
		fmt.Println("left:", key, msgs)
	})
	// Output:
	// sub-B [B1] attempt 2 more: false
	// fifo: closed
	// {Messages:2 Waiting:2 Leases:0 Keys:1 Delayed:0 Retrying:0 BehindRetrying:0 Held:1 HeldMessages:2}
	// left: sub-A [A1]
	// left: sub-A [A2]
}

func mustGet(g *fifo.Groups[string, string]) fifo.Lease[string, string] {
	l, err := g.Get(context.Background())
	if err != nil {
		panic(err)
	}
	return l
}
