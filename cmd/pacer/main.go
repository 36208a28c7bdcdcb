// Command pacer inspects and steers the queues that pacer Runners keep in
// a shared store, Redis or PostgreSQL, from any machine that reaches it:
//
//	go install github.com/pacerkit/pacer/cmd/pacer@latest
//
// Usage:
//
//	pacer COMMAND [store flags] [arguments] [-json]
//
// The store is -redis URL (redis://host:port/db, with -redis-prefix, the
// redisstore.Config.Prefix, "pacer" by default) or -postgres URL (with
// -schema, the pgstore.Config.Schema, "pacer" by default). Exactly one of
// them, before or after the command's name.
//
// The commands:
//
//	queues                          the queues with their counts
//	keys QUEUE [-state S] [-prefix P] [-limit N] [-cursor C]
//	                                a page of a queue's keys
//	explain QUEUE KEY               why a key is or is not running, in one sentence
//	values QUEUE KEY [-limit N]     a key's first values
//	dead QUEUE [-after ID] [-limit N]
//	                                a queue's dead letters, oldest first
//	redrive QUEUE ID                a dead letter's values back on their key
//	purge QUEUE -before AGE|TIME    remove old dead letters
//	pause QUEUE [KEY]               stop every process from leasing a queue or a key
//	resume QUEUE [KEY]              end that pause
//	retry QUEUE KEY                 a retrying or deferred key ready now
//	release QUEUE KEY               a held key back in the ready order
//	drop QUEUE KEY [-reason R]      a key's values to one dead letter
//	serve [-listen ADDR]            the web console over the store
//
// Every command takes -h, which prints its usage, an example and its
// flags. Tables are for people: times show as an age and in RFC 3339
// ("3m12s ago (2026-05-01T10:00:00Z)"), keys that are not printable
// Go-quoted, values as JSON, text or hex. -json writes what the store
// holds, for scripts, in the JSON of the store package; values there are
// base64.
//
// A key on the command line is taken as it is, or, Go-quoted ("a\tb"),
// unquoted: a table's quoted key is an argument as it shows. After "--"
// every argument is positional, for a key that starts with "-".
//
// The exit status is 0 when the command did what it says; 1 when it
// failed (the store did not answer, does not support the command) and
// when an action found nothing to do: pause of a paused queue, resume,
// release or retry of a key that was not paused, held or retrying, drop
// of a key without values, redrive of a dead letter that is gone. pacer
// then says so on stderr, ending with "nothing changed", and -json writes
// "changed": false. purge is a sweep: removing none exits 0. The status
// is 2 for a command line that pacer cannot run: an unknown command or
// flag, a missing or extra argument, neither or both of -redis and
// -postgres.
//
// With -postgres, pacer refuses a schema that does not exist rather than
// make an empty one; on an existing schema it runs the store's
// migrations that have not run yet, as any pgstore.New does.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
