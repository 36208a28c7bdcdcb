package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// commands are pacer's subcommands, in the order its help lists them.
func commands() []command {
	return []command{
		queuesCommand(), keysCommand(), explainCommand(), valuesCommand(),
		deadCommand(), redriveCommand(), purgeCommand(),
		pauseCommand(), resumeCommand(), retryCommand(), releaseCommand(), dropCommand(),
		serveCommand(),
	}
}

// storeHelp is what every command's help says of the store flags.
const storeHelp = `The store is -redis URL (with -redis-prefix, "pacer" by default) or
-postgres URL (with -schema, "pacer" by default): exactly one of them,
before or after the command's name.`

// exitHelp is what the help says of the exit status.
const exitHelp = `Exit status: 0 when the command did what it says; 1 when it failed, and
when an action found nothing to do (a queue paused already, a key that was
not held), which it says on stderr ending with "nothing changed"; 2 for a
command line it cannot run.`

// run runs pacer with args (without the program's name) and returns its
// exit status: see exitHelp.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "pacer:", err)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return errExit(err)
}

// dispatch reads the flags before the command's name, finds the command
// and runs it.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sf := defaultStoreFlags()
	top := flag.NewFlagSet("pacer", flag.ContinueOnError)
	top.SetOutput(io.Discard) // its errors come back from Parse, and are said once
	top.Usage = func() {}
	sf.register(top)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			mainHelp(stdout)
			return err
		}
		return usagef("%v (pacer -h lists the commands)", err)
	}
	if top.NArg() == 0 {
		return usagef("name a command (pacer -h lists them)")
	}
	name, rest := top.Arg(0), top.Args()[1:]
	if name == "help" {
		if len(rest) == 0 {
			mainHelp(stdout)
			return flag.ErrHelp
		}
		name, rest = rest[0], []string{"-h"}
	}
	for _, c := range commands() {
		if c.name == name {
			return runCommand(ctx, c, sf, rest, stdout, stderr)
		}
	}
	return usagef("unknown command %q (pacer -h lists the commands)", name)
}

// runCommand parses a command's flags and arguments, opens the store and
// runs the command.
func runCommand(ctx context.Context, c command, sf storeFlags, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pacer "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	sf.register(fs)
	act := c.bind(fs)
	pos, err := parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		commandHelp(stdout, c, fs)
		return err
	case err != nil:
		return usagef("%v\nusage: %s", err, c.usageLine())
	case len(pos) < c.minArgs:
		return usagef("%s needs %s\nusage: %s", c.name, c.args, c.usageLine())
	case len(pos) > c.maxArgs:
		return usagef("%s takes %s, not %q\nusage: %s", c.name, orNothing(c.args), pos[c.maxArgs:], c.usageLine())
	}
	if err := sf.check(); err != nil {
		return usagef("%v\nusage: %s", err, c.usageLine())
	}
	for i := range pos {
		pos[i] = argKey(pos[i])
	}
	st, closeStore, err := sf.open(ctx)
	defer closeStore()
	if err != nil {
		return err
	}
	return act(ctx, &call{name: c.name, args: pos, st: st, out: stdout, json: sf.json, now: time.Now()})
}

func orNothing(args string) string {
	if args == "" {
		return "no arguments"
	}
	return args
}

// mainHelp writes pacer's help: its commands and what they share.
func mainHelp(w io.Writer) {
	fmt.Fprint(w, `pacer inspects and steers the queues that pacer Runners keep in Redis or
PostgreSQL, from any machine that reaches the store.

usage: pacer COMMAND [store flags] [arguments] [-json]

commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
%s

Tables are for people; -json writes what the store holds for scripts
(see the store package's JSON). Keys that are not printable show Go-quoted
("a\tb"), and a Go-quoted argument is read back the same way; after "--"
every argument is positional, for a key that starts with "-".

%s

pacer COMMAND -h says more of a command.
example: pacer keys -redis redis://localhost:6379/0 emails -state held
`, storeHelp, exitHelp)
}

// commandHelp writes a command's help: usage, what it does, an example,
// its flags.
func commandHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nexample:\n  %s\n\n%s\n\nflags:\n", c.usageLine(), strings.TrimSpace(c.doc), c.example, storeHelp)
	fs.SetOutput(w)
	fs.PrintDefaults()
}
