package pacer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/window"
)

// Explain says why a key does not run: here it waits behind two keys, and
// none will start before the window opens at 09:00.
func ExampleRunner_Explain() {
	clk := clock.NewMock()
	clk.Set(time.Date(2025, 3, 1, 6, 30, 0, 0, time.UTC))
	office, _ := window.Daily("09:00", "17:00", time.UTC)
	r, err := pacer.New(pacer.Config[string, string]{Clock: clk, Window: &office},
		func(context.Context, string, []string) error { return nil })
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, key := range []string{"a", "b", "u1"} {
		_ = r.Add(ctx, key, "hello "+key)
	}

	x, err := r.Explain(ctx, "u1")
	if err != nil {
		panic(err)
	}
	fmt.Println(x)
	b, _ := json.Marshal(x)
	fmt.Println(string(b))
	x, _ = r.Explain(ctx, "u2")
	fmt.Println(x)

	// The window never opens on this clock: a Shutdown whose ctx is done
	// hands what is left to OnDrop at once.
	done, cancel := context.WithCancel(ctx)
	cancel()
	_ = r.Shutdown(done)
	// Output:
	// key "u1" is ready with 2 keys ahead of it, and the window is closed until 09:00:00Z
	// {"key":"u1","state":"ready","values":1,"ahead":2,"attempt":0,"max_attempts":25,"at":"2025-03-01T06:30:00Z","window_closed_until":"2025-03-01T09:00:00Z"}
	// key "u2" holds no values: nothing to explain
}
