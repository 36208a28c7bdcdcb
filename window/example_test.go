package window_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/window"
)

func ExampleParse() {
	s, err := window.Parse("Mon-Fri 09:00-17:30 Europe/Paris")
	if err != nil {
		panic(err)
	}
	paris := s.Location()
	friday := time.Date(2026, 11, 27, 16, 0, 0, 0, paris)
	saturday := time.Date(2026, 11, 28, 10, 0, 0, 0, paris)

	fmt.Println(s)
	fmt.Println(s.Contains(friday), s.EndAt(friday))
	fmt.Println(s.Contains(saturday), s.NextOpen(saturday))
	// Output:
	// Mon-Fri 09:00-17:30 Europe/Paris
	// true 2026-11-27 17:30:00 +0100 CET
	// false 2026-11-30 09:00:00 +0100 CET
}

func ExampleParse_error() {
	_, err := window.Parse("Mon-Fri 25:00-17:30 Europe/Paris")
	fmt.Println(err)
	// Output:
	// window: bad start time "25:00": hour must be 00-23
}

func ExampleDaily_crossMidnight() {
	s, err := window.Daily("22:00", "06:00", time.UTC, time.Friday)
	if err != nil {
		panic(err)
	}
	// Saturday 03:00 belongs to the span that opened on Friday.
	saturday := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	fmt.Println(s, s.Contains(saturday), s.EndAt(saturday))
	// Output:
	// Fri 22:00-06:00 UTC true 2026-11-28 06:00:00 +0000 UTC
}

// A spring-forward gap swallows 02:30 in Paris on 2026-03-29: the window
// opens at the first instant after it.
func ExampleSchedule_NextOpen_daylightSaving() {
	s, err := window.Parse("02:30-05:00 Europe/Paris")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.NextOpen(time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)))
	// Output:
	// 2026-03-29 03:00:00 +0200 CEST
}

// A fan-out fired after its window closed sees EndAt in the past and sends
// nothing; its context from Context is already cancelled.
func Example_tooLate() {
	s, err := window.Parse("06:00-18:00 Europe/Paris")
	if err != nil {
		panic(err)
	}
	fired := time.Date(2026, 11, 23, 19, 30, 0, 0, s.Location())
	fmt.Println("window ended", s.EndAt(fired))

	mock := clock.NewMock()
	mock.Set(fired)
	ctx, cancel := s.WithClock(mock).Context(context.Background())
	defer cancel()

	groups := []string{"family", "team", "club"}
	sent := 0
	for range groups {
		if ctx.Err() != nil {
			break
		}
		sent++
	}
	fmt.Printf("%d of %d delivered, outside the window: %v\n", sent, len(groups), errors.Is(context.Cause(ctx), window.ErrOutside))
	// Output:
	// window ended 2026-11-23 18:00:00 +0100 CET
	// 0 of 3 delivered, outside the window: true
}
