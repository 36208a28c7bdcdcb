package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pacerkit/pacer/store"
)

// A command is one of pacer's subcommands.
type command struct {
	name    string
	args    string // the positional arguments, as the usage line shows them
	flags   string // the command's own flags, as the usage line shows them
	summary string // one line, for the list of commands
	doc     string // what it does, in a few sentences
	example string
	// minArgs and maxArgs bound the positional arguments.
	minArgs, maxArgs int
	// bind defines the command's own flags on fs and returns what runs
	// the command once they are parsed.
	bind func(fs *flag.FlagSet) action
}

// An action runs a command on an open store.
type action func(ctx context.Context, c *call) error

// A call is one run of a command: its positional arguments, the store,
// and where and how it writes.
type call struct {
	name string
	args []string
	st   store.Store
	out  io.Writer
	json bool
	now  time.Time // when the command started, which the tables' ages count from
}

// usageLine is the command's usage, on one line.
func (c command) usageLine() string {
	line := "pacer " + c.name + " [store flags]"
	if c.args != "" {
		line += " " + c.args
	}
	if c.flags != "" {
		line += " " + c.flags
	}
	return line + " [-json]"
}

// A usageError is a command line pacer cannot run: a missing or extra
// argument, an unknown flag or command, a bad flag value. pacer exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// A noChange is an action that found nothing to do: the queue was paused
// already, the key was not held, the dead letter did not exist. pacer says
// so and exits 1, so that a script sees that its action changed nothing.
type noChange struct{ msg string }

func (e noChange) Error() string { return e.msg + "; nothing changed" }

// unsupported is the error of a command that the store does not support.
func unsupported(what string) error {
	return fmt.Errorf("this store does not support %s", what)
}

// inspector returns the store as a store.Inspector, or an error naming
// what it cannot do.
func (c *call) inspector() (store.Inspector, error) {
	if in, ok := c.st.(store.Inspector); ok {
		return in, nil
	}
	return nil, unsupported(c.name)
}

// operator returns the store as a store.Operator.
func (c *call) operator() (store.Operator, error) {
	if op, ok := c.st.(store.Operator); ok {
		return op, nil
	}
	return nil, unsupported(c.name)
}

// deadLetters returns the store as a store.DeadLetters.
func (c *call) deadLetters() (store.DeadLetters, error) {
	if dl, ok := c.st.(store.DeadLetters); ok {
		return dl, nil
	}
	return nil, unsupported("dead letters")
}

// writeJSON writes v as indented JSON, for -json.
func (c *call) writeJSON(v any) error {
	e := json.NewEncoder(c.out)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

// A table writes rows of cells in aligned columns.
type table struct{ w *tabwriter.Writer }

// table starts a table with the given column heads.
func (c *call) table(heads ...string) *table {
	t := &table{tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)}
	t.row(heads...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.w, strings.Join(cells, "\t")) }

func (t *table) flush() error { return t.w.Flush() }

// parseArgs parses args with fs, flags and positional arguments in any
// order (keys QUEUE -state held, or -state held QUEUE), and returns the
// positional ones. After "--" every argument is positional, for a key that
// starts with "-".
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// errExit is the exit status of err: 0 for nil, 2 for a usageError, 1
// for anything else (a failed action, a noChange, an unreachable store).
func errExit(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(usageError)):
		return 2
	}
	return 1
}
