// Package window provides daily delivery windows in a time zone.
//
// A Schedule says when work may run, e.g. "Mon-Fri 09:00-17:30
// Europe/Paris" or "22:00-06:00 Asia/Kolkata". Build one with Daily or
// Parse; String and MarshalText print it back in the form Parse reads.
//
// # Spans
//
// Each opening day of a Schedule holds one span [open, close). A window whose
// end is not after its start crosses midnight; its span belongs to the day it
// opens on, and the Schedule's days filter opening days only: "Fri
// 22:00-06:00" is open on Saturday until 06:00, and Saturday 22:00 is not an
// opening. An end of 24:00 is the midnight that ends the opening day, so
// "Sat-Sun 00:00-24:00" is open for the whole of both days; its two spans
// touch at Sunday 00:00.
//
// Daylight saving follows one rule for start and end alike: a wall time
// resolves to the first instant whose wall clock reads that time or later.
// So a wall time skipped by a spring-forward gap opens (or closes) at the
// first instant after the gap, and a wall time that occurs twice at a
// fall-back means its first occurrence; in the repeated hour the wall clock
// passes a start or end a second time without effect. A span whose both ends
// fall in one gap is empty that day. Spans never overlap.
//
// # Queries
//
// Contains, NextOpen and EndAt take the instant as an argument and read no
// clock, like the ...At forms of golang.org/x/time/rate:
//
//   - Contains(t) reports whether t is in a span.
//   - NextOpen(t) is t when Contains(t), else the next open.
//   - EndAt(t) is the close of t's span, or, when t is in none, the instant
//     the window last closed, never after t: work fired too late and given
//     EndAt as its deadline does nothing.
//
// Context and Wait read the Schedule's clock, the real one unless set with
// WithClock (a *clock.Mock in tests; the real clock also runs on the fake
// time of a testing/synctest bubble). Context(ctx) ends at the close of the
// current span with cause ErrOutside, at once if the window is closed; Wait(ctx)
// returns when the window is open.
//
// A Schedule is an immutable value, safe for concurrent use. The zero
// Schedule is never open.
//
// # Speed
//
// Contains, NextOpen and EndAt do not allocate. They ask the Location for the
// offset and the bounds of the zone period around t (two lookups) and then
// work in plain wall-clock arithmetic, falling back to walking zone periods
// only within two days after a transition.
//
// A call costs a small constant number of time.Date calls. Figures, and
// the command that reproduces them: BENCHMARKS.md at the repository root.
package window
