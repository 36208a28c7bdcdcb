package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"
)

func deadCommand() command {
	return command{
		name:    "dead",
		args:    "QUEUE",
		flags:   "[-after ID] [-limit N]",
		summary: "list a queue's dead letters, oldest first",
		doc: `Lists QUEUE's dead letters, the batches that were given up, oldest first:
each with its ID (for redrive), when it was dropped, its key, its last
attempt, its values (the first shown as values shows it) and its error.
-json writes each whole, its values in base64.`,
		example: "pacer dead -redis redis://localhost:6379/0 emails -limit 50",
		minArgs: 1, maxArgs: 1,
		bind: func(fs *flag.FlagSet) action {
			after := fs.Uint64("after", 0, "start after the dead letter with this ID (the last ID of the page before)")
			limit := fs.Int("limit", 100, "the most dead letters to show")
			return func(ctx context.Context, c *call) error {
				dl, err := c.deadLetters()
				if err != nil {
					return err
				}
				ds, err := dl.DeadLetters(ctx, c.args[0], *after, *limit)
				if err != nil {
					return err
				}
				for i := range ds {
					for j, v := range ds[i].Values {
						ds[i].Values[j] = payload(v)
					}
				}
				if c.json {
					return c.writeJSON(nonNil(ds))
				}
				t := c.table("ID", "DROPPED", "KEY", "ATTEMPT", "VALUES", "FIRST VALUE", "ERROR")
				for _, d := range ds {
					first := "-"
					if len(d.Values) > 0 {
						form, shown := showValue(d.Values[0])
						first = form + " " + shown
					}
					errText := "-"
					if d.Err != "" {
						errText = showText(d.Err)
					}
					t.row(strconv.FormatUint(d.ID, 10), showTime(c.now, d.At), showKey(d.Key), itoa(d.Attempt), itoa(len(d.Values)), first, errText)
				}
				return t.flush()
			}
		},
	}
}

func redriveCommand() command {
	return command{
		name:    "redrive",
		args:    "QUEUE ID",
		summary: "put a dead letter's values back on its key, ready at once",
		doc: `Appends the values of QUEUE's dead letter ID to the tail of its key, ready
at once, and removes the dead letter. A dead letter that does not exist
(redriven or purged already) changes nothing: pacer says so and exits 1.`,
		example: "pacer redrive -redis redis://localhost:6379/0 emails 17",
		minArgs: 2, maxArgs: 2,
		bind: func(*flag.FlagSet) action {
			return func(ctx context.Context, c *call) error {
				id, err := strconv.ParseUint(c.args[1], 10, 64)
				if err != nil {
					return usagef("redrive: ID %q is not a dead letter's ID (a number, as pacer dead shows it)", c.args[1])
				}
				dl, err := c.deadLetters()
				if err != nil {
					return err
				}
				ok, err := dl.Redrive(ctx, c.args[0], id)
				if err != nil {
					return err
				}
				r := result{Action: "redrive", Queue: c.args[0], ID: id, Changed: ok}
				return c.report(r, fmt.Sprintf("redrove dead letter %d of queue %s", id, showKey(c.args[0])),
					fmt.Sprintf("queue %s has no dead letter %d", showKey(c.args[0]), id))
			}
		},
	}
}

func purgeCommand() command {
	return command{
		name:    "purge",
		args:    "QUEUE",
		flags:   "-before AGE|TIME",
		summary: "remove a queue's dead letters dropped before a time",
		doc: `Removes QUEUE's dead letters that were dropped before -before: an age
(24h: dropped more than 24 hours ago, by this machine's clock) or an
instant in RFC 3339. Removing none is not a failure: purge is a sweep, and
exits 0 whatever it found.`,
		example: "pacer purge -postgres postgres://localhost/app emails -before 168h",
		minArgs: 1, maxArgs: 1,
		bind: func(fs *flag.FlagSet) action {
			before := fs.String("before", "", "remove the dead letters dropped before this: an age (24h) or an RFC 3339 time (required)")
			return func(ctx context.Context, c *call) error {
				t, err := parseBefore(*before, c.now)
				if err != nil {
					return err
				}
				dl, err := c.deadLetters()
				if err != nil {
					return err
				}
				n, err := dl.Purge(ctx, c.args[0], t)
				if err != nil {
					return err
				}
				r := result{Action: "purge", Queue: c.args[0], Before: t.UTC(), Removed: &n, Changed: n > 0}
				if c.json {
					return c.writeJSON(r)
				}
				_, err = fmt.Fprintf(c.out, "removed %d dead letters of queue %s dropped before %s\n", n, showKey(c.args[0]), t.UTC().Format(time.RFC3339))
				return err
			}
		},
	}
}

// parseBefore reads purge's -before: an age before now, or an instant.
func parseBefore(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, usagef("purge needs -before: an age (24h) or an RFC 3339 time")
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usagef("-before %s: an age must not be negative", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("-before %q is neither an age (24h) nor an RFC 3339 time", s)
	}
	return t, nil
}
