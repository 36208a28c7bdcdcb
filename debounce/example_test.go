package debounce_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/debounce"
)

// Three edits of one document within a second become one save. A mock
// clock stands in for the wall clock.
func Example() {
	clk := clock.NewMock()
	saved := make(chan struct{})
	d, err := debounce.New(debounce.Config{Wait: time.Second, Clock: clk},
		func(doc string, b debounce.Burst[string]) {
			fmt.Printf("save %s: %d edits %v, quiet since %v\n", doc, b.Count, b.Values, b.Last.UTC().Format(time.TimeOnly))
			close(saved)
		})
	if err != nil {
		panic(err)
	}
	for _, edit := range []string{"title", "body", "tags"} {
		_ = d.Add("doc-1", edit)
		clk.Add(300 * time.Millisecond)
	}
	clk.Add(time.Second)
	<-saved
	_ = d.Close()
	// Output:
	// save doc-1: 3 edits [title body tags], quiet since 00:00:00
}

// With Leading, the first event of a quiet key is handled at once and the
// rest of its burst at the trailing edge. Shutdown fires what is still
// pending.
func Example_leading() {
	d, err := debounce.New(debounce.Config{Wait: time.Hour, Leading: true},
		func(user string, b debounce.Burst[int]) {
			fmt.Printf("%s: %v of %d\n", user, b.Values, b.Count)
		})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 3; i++ {
		_ = d.Add("ana", i)
	}
	_ = d.Shutdown(context.Background())
	// Output:
	// ana: [1] of 1
	// ana: [2 3] of 3
}

// Flush hands a burst over at once; Close discards the rest but still
// delivers what was handed over.
func ExampleKeyed_Flush() {
	var got []string // written by fire; read after Close, which waits for it
	d, err := debounce.New(debounce.Config{Wait: time.Hour},
		func(key string, b debounce.Burst[int]) {
			got = append(got, fmt.Sprintf("%s %v", key, b.Values))
		})
	if err != nil {
		panic(err)
	}
	_ = d.Add("a", 1)
	_ = d.Add("b", 2)
	_ = d.Add("a", 3)
	fmt.Println("flushed:", d.Flush("a"), "pending:", d.Pending())
	_ = d.Close()
	fmt.Println("fired:", got)
	fmt.Println("after close:", d.Add("a", 4))
	// Output:
	// flushed: true pending: 1
	// fired: [a [1 3]]
	// after close: debounce: closed
}

// AddWait opens a burst with a quiet period of its own; values that join
// the burst keep it. Shutdown fires what is pending in deadline order.
func ExampleKeyed_AddWait() {
	d, err := debounce.New(debounce.Config{Wait: time.Hour},
		func(key string, b debounce.Burst[int]) { fmt.Println(key, b.Values) })
	if err != nil {
		panic(err)
	}
	_ = d.AddWait("patient", 1, 2*time.Hour)
	_ = d.Add("eager", 2)
	_ = d.Add("patient", 3) // joins the burst: still 2 hours
	_ = d.Shutdown(context.Background())
	// Output:
	// eager [2]
	// patient [1 3]
}
