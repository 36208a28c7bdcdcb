package main

import (
	"context"
	"errors"
	"flag"
)

func serveCommand() command {
	return command{
		name:    "serve",
		flags:   "[-listen ADDR]",
		summary: "serve the web console over the store",
		doc:     `Serves the web console over the store on -listen.`,
		example: "pacer serve -redis redis://localhost:6379/0 -listen :8080",
		bind: func(fs *flag.FlagSet) action {
			fs.String("listen", ":8080", "the address to serve on")
			return func(ctx context.Context, c *call) error {
				return errors.New("serve: the console is not in this build")
			}
		},
	}
}
