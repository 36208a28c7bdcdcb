package pacer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/window"
)

// A delivery window: outside it a batch waits for the window to open, and
// inside it the handler's ctx ends when the window closes. A mock clock
// plays a Monday morning in Paris.
func Example_window() {
	hours, err := window.Parse("Mon-Fri 09:00-17:30 Europe/Paris")
	if err != nil {
		panic(err)
	}
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 30, 8, 0, 0, 0, hours.Location())) // Monday 08:00

	waiting, sent := make(chan struct{}), make(chan struct{})
	r, err := pacer.New(pacer.Config[string, string]{
		Window: &hours,
		Clock:  clk,
		OnEvent: func(e pacer.Event[string]) {
			if e.Kind == pacer.EventSkipped {
				fmt.Println(e.Key, "waits", e.Delay, "for the window")
				close(waiting)
			}
		},
	}, func(ctx context.Context, group string, msgs []string) error {
		closes, _ := ctx.Deadline()
		fmt.Println("sent", msgs, "to", group, "at", clk.Now().Format("15:04"), "with a ctx that ends at", closes.Format("15:04"))
		close(sent)
		return nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	go r.Run(ctx)

	_ = r.Add(ctx, "group-1", "reminder")
	<-waiting
	clk.Add(time.Hour) // 09:00
	<-sent
	_ = r.Shutdown(ctx)
	// Output:
	// group-1 waits 1h0m0s for the window
	// sent [reminder] to group-1 at 09:00 with a ctx that ends at 17:30
}
