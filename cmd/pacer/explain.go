package main

import (
	"context"
	"flag"
	"fmt"
)

func explainCommand() command {
	return command{
		name:    "explain",
		args:    "QUEUE KEY",
		summary: "say why a key is or is not running",
		doc: `Says, in one sentence, what KEY of QUEUE is doing and why, from the
store's state: paused, waiting for a burst to end, ready behind other
keys, leased, retrying, held.`,
		example: "pacer explain -redis redis://localhost:6379/0 emails user-42",
		minArgs: 2, maxArgs: 2,
		bind: func(*flag.FlagSet) action {
			return func(ctx context.Context, c *call) error {
				in, err := c.inspector()
				if err != nil {
					return err
				}
				info, ok, err := in.Key(ctx, c.args[0], c.args[1])
				if err != nil {
					return err
				}
				if c.json {
					return c.writeJSON(info)
				}
				if !ok {
					_, err = fmt.Fprintf(c.out, "key %s of queue %s holds no values\n", showKey(c.args[1]), showKey(c.args[0]))
					return err
				}
				t := c.table("KEY", "STATE", "VALUES", "ATTEMPT", "SINCE", "UNTIL", "OLDEST", "NOTES")
				t.row(keyRow(c, info)...)
				return t.flush()
			}
		},
	}
}
