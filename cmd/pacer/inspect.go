package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/pacerkit/pacer/store"
)

func queuesCommand() command {
	return command{
		name:    "queues",
		summary: "list the queues that hold values or dead letters, with their counts",
		doc: `Lists the store's queues that hold values or dead letters, by name, with
their counts (store.Stats) and how long the work at the front of each has
waited (OLDEST READY).`,
		example: "pacer queues -redis redis://localhost:6379/0",
		bind: func(*flag.FlagSet) action {
			return func(ctx context.Context, c *call) error {
				in, err := c.inspector()
				if err != nil {
					return err
				}
				qs, err := in.Queues(ctx)
				if err != nil {
					return err
				}
				if c.json {
					return c.writeJSON(nonNil(qs))
				}
				t := c.table("QUEUE", "STATE", "KEYS", "VALUES", "READY", "DEBOUNCING", "LEASED", "RETRYING", "HELD", "PAUSED KEYS", "DEAD", "OLDEST READY")
				for _, q := range qs {
					s := q.Stats
					state := "running"
					if s.Paused {
						state = "paused"
					}
					t.row(showKey(q.Name), state, itoa(s.Keys), itoa(s.Values), itoa(s.Ready), itoa(s.Pending), itoa(s.Leased),
						itoa(s.Retrying), itoa(s.Held), itoa(s.PausedKeys), itoa(s.Dead), showTime(c.now, q.Oldest))
				}
				return t.flush()
			}
		},
	}
}

func keysCommand() command {
	return command{
		name:    "keys",
		args:    "QUEUE",
		flags:   "[-state S] [-prefix P] [-limit N] [-cursor C]",
		summary: "list a page of a queue's keys and what each is doing",
		doc: `Lists a page of QUEUE's keys, with what each is doing: its state and since
or until when, its values, its attempt, and its lease's holder, fence and
last error. A last line gives the -cursor of the next page, if any.`,
		example: "pacer keys -redis redis://localhost:6379/0 emails -state held -limit 20",
		minArgs: 1, maxArgs: 1,
		bind: func(fs *flag.FlagSet) action {
			var q store.KeyQuery
			fs.TextVar(&q.State, "state", store.KeyState(0), "only the keys in this state: debouncing, ready, leased, retrying, held or deferred")
			fs.StringVar(&q.Prefix, "prefix", "", "only the keys that start with this")
			fs.IntVar(&q.Limit, "limit", 100, "the most keys in the page, at most 1000")
			fs.StringVar(&q.Cursor, "cursor", "", "the page after the one that gave this cursor")
			return func(ctx context.Context, c *call) error {
				in, err := c.inspector()
				if err != nil {
					return err
				}
				q.Prefix, q.Cursor = argKey(q.Prefix), argKey(q.Cursor)
				page, err := in.Keys(ctx, c.args[0], q)
				if err != nil {
					return err
				}
				if c.json {
					page.Keys = nonNil(page.Keys)
					return c.writeJSON(page)
				}
				t := c.table("KEY", "STATE", "VALUES", "ATTEMPT", "SINCE", "UNTIL", "OLDEST", "NOTES")
				for _, k := range page.Keys {
					t.row(keyRow(c, k)...)
				}
				if err := t.flush(); err != nil {
					return err
				}
				if page.Next != "" {
					_, err = fmt.Fprintf(c.out, "next page: -cursor %s\n", showKey(page.Next))
				}
				return err
			}
		},
	}
}

// keyRow is a key's row in the table of keys.
func keyRow(c *call, k store.KeyInfo) []string {
	state := k.State.String()
	if k.Paused {
		state += " (paused)"
	}
	var holder, fence, maxWait, errText string
	if k.Holder != "" {
		holder = "holder " + showText(k.Holder)
	}
	if k.Fence != 0 {
		fence = "fence " + strconv.FormatUint(k.Fence, 10)
	}
	if k.MaxWait {
		maxWait = "until is the max wait"
	}
	if k.Err != "" {
		errText = "error: " + showText(k.Err)
	}
	return []string{showKey(k.Key), state, itoa(k.Values), itoa(k.Attempt), showTime(c.now, k.Since), showTime(c.now, k.Until),
		showTime(c.now, k.Oldest), joinNotes(holder, fence, maxWait, errText)}
}

func valuesCommand() command {
	return command{
		name:    "values",
		args:    "QUEUE KEY",
		flags:   "[-limit N]",
		summary: "show a key's first values",
		doc: `Shows KEY's first values in QUEUE, in the order they will be leased (those
out on a lease and those of an open burst included), each with when it was
added: as JSON when it parses as JSON, as text when it is printable, else
in hex (the AS column says which). -json writes the values as the store
keeps them, in base64.`,
		example: "pacer values -postgres postgres://localhost/app emails user-42 -limit 5",
		minArgs: 2, maxArgs: 2,
		bind: func(fs *flag.FlagSet) action {
			limit := fs.Int("limit", 20, "the most values to show")
			return func(ctx context.Context, c *call) error {
				in, err := c.inspector()
				if err != nil {
					return err
				}
				vals, err := in.Values(ctx, c.args[0], c.args[1], *limit)
				if err != nil {
					return err
				}
				for i := range vals {
					vals[i].Value = payload(vals[i].Value)
				}
				if c.json {
					return c.writeJSON(nonNil(vals))
				}
				t := c.table("#", "ADDED", "AS", "VALUE")
				for i, v := range vals {
					form, shown := showValue(v.Value)
					t.row(itoa(i+1), showTime(c.now, v.Added), form, shown)
				}
				return t.flush()
			}
		},
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// nonNil returns s, or an empty slice for nil, so that -json writes []
// rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
