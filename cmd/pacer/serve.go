package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/pacerkit/pacer/console"
)

func serveCommand() command {
	return command{
		name:    "serve",
		flags:   "[-listen ADDR] [-actions]",
		summary: "serve the web console over the store",
		doc: `Serves the web console (package console) over the store on -listen, until
interrupted: the queues, their keys and values, the dead letters. It is
read-only unless -actions, which lets anyone who reaches -listen pause,
resume, retry, release, drop, redrive and purge: serve it so only behind a
proxy that authenticates. It says where it serves on stdout, then exits 0
once an interrupt (or SIGTERM) stopped it.`,
		example: "pacer serve -redis redis://localhost:6379/0 -listen :8080",
		bind: func(fs *flag.FlagSet) action {
			listen := fs.String("listen", "localhost:8080", "the address to serve on: host:port, :port for every interface")
			actions := fs.Bool("actions", false, "let the console's actions through, for anyone who reaches -listen")
			return func(ctx context.Context, c *call) error {
				cfg := console.Config{Store: c.st}
				if *actions {
					cfg.Authorize = func(*http.Request, console.Action) error { return nil }
				}
				h, err := console.New(cfg)
				if err != nil {
					return err
				}
				ln, err := net.Listen("tcp", *listen)
				if err != nil {
					return err
				}
				srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
				mode := "read-only"
				if *actions {
					mode = "with actions"
				}
				fmt.Fprintf(c.out, "serving the console, %s, on http://%s/\n", mode, ln.Addr())
				served := make(chan error, 1)
				go func() { served <- srv.Serve(ln) }()
				select {
				case err := <-served:
					return err
				case <-ctx.Done():
				}
				// Let the pages being served finish, for a few seconds.
				stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = srv.Shutdown(stop)
				if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
					err = errors.Join(err, serr)
				}
				return err
			}
		},
	}
}
