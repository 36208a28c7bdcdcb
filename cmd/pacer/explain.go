package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/pacerkit/pacer"
)

func explainCommand() command {
	return command{
		name:    "explain",
		args:    "QUEUE KEY",
		summary: "say why a key is or is not running",
		doc: `Says, in one sentence, what KEY of QUEUE is doing and what holds it back,
from the store's state (pacer.ExplainStored): a pause of the key or of the
queue, a burst that has not ended, the keys ready ahead of it, a lease, a
retry delay, a hold. A Runner's own window and limiter are not in the store,
and so not in the sentence.`,
		example: "pacer explain -redis redis://localhost:6379/0 emails user-42",
		minArgs: 2, maxArgs: 2,
		bind: func(*flag.FlagSet) action {
			return func(ctx context.Context, c *call) error {
				in, err := c.inspector()
				if err != nil {
					return err
				}
				x, err := pacer.ExplainStored(ctx, in, c.args[0], c.args[1])
				if err != nil {
					return err
				}
				if c.json {
					return c.writeJSON(x)
				}
				_, err = fmt.Fprintln(c.out, x)
				return err
			}
		},
	}
}
