package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/pacerkit/pacer/store"
)

// queueOrKey names what pause and resume act on, for their messages.
func queueOrKey(args []string) string {
	if len(args) == 2 {
		return fmt.Sprintf("key %s of queue %s", showKey(args[1]), showKey(args[0]))
	}
	return "queue " + showKey(args[0])
}

// keyOf is the key a result names: nil for an action on the whole queue.
func keyOf(args []string) *string {
	if len(args) < 2 {
		return nil
	}
	return &args[1]
}

func pauseCommand() command {
	return command{
		name:    "pause",
		args:    "QUEUE [KEY]",
		summary: "stop every process from leasing a queue's keys, or one key",
		doc: `Pauses QUEUE, or only its KEY, in every process that shares the store: no
new batch starts until resume. Batches out on a lease run on and end as
usual; adds go on. A pause is kept by the store, and outlives the values
of a key. A queue or key that was paused already changes nothing: pacer
says so and exits 1.`,
		example: "pacer pause -redis redis://localhost:6379/0 emails user-42",
		minArgs: 1, maxArgs: 2,
		bind: pauseAction("pause", store.Operator.PauseKey, store.Operator.PauseQueue, "paused", "was paused already"),
	}
}

func resumeCommand() command {
	return command{
		name:    "resume",
		args:    "QUEUE [KEY]",
		summary: "end a pause of a queue or a key",
		doc: `Ends the pause of QUEUE, or of its KEY, in every process that shares the
store: its keys are leased again. A queue or key that was not paused
changes nothing: pacer says so and exits 1.`,
		example: "pacer resume -redis redis://localhost:6379/0 emails",
		minArgs: 1, maxArgs: 2,
		bind: pauseAction("resume", store.Operator.ResumeKey, store.Operator.ResumeQueue, "resumed", "was not paused"),
	}
}

// pauseAction is the action of pause and resume: onKey on QUEUE's KEY when
// there is one, else onQueue on QUEUE, reported as done or, when it
// changed nothing, as unchanged.
func pauseAction(name string, onKey func(store.Operator, context.Context, string, string) (bool, error),
	onQueue func(store.Operator, context.Context, string) (bool, error), done, unchanged string) func(*flag.FlagSet) action {
	return func(*flag.FlagSet) action {
		return func(ctx context.Context, c *call) error {
			op, err := c.operator()
			if err != nil {
				return err
			}
			var ok bool
			if len(c.args) == 2 {
				ok, err = onKey(op, ctx, c.args[0], c.args[1])
			} else {
				ok, err = onQueue(op, ctx, c.args[0])
			}
			if err != nil {
				return err
			}
			what := queueOrKey(c.args)
			return c.report(result{Action: name, Queue: c.args[0], Key: keyOf(c.args), Changed: ok},
				done+" "+what, what+" "+unchanged)
		}
	}
}

func retryCommand() command {
	return command{
		name:    "retry",
		args:    "QUEUE KEY",
		summary: "make a retrying or deferred key ready now",
		doc: `Makes KEY of QUEUE, retrying or deferred, ready now, at the tail of the
ready order, with its batch and attempt as they are. A key in any other
state changes nothing: pacer says so and exits 1.`,
		example: "pacer retry -redis redis://localhost:6379/0 emails user-42",
		minArgs: 2, maxArgs: 2,
		bind: func(*flag.FlagSet) action {
			return func(ctx context.Context, c *call) error {
				op, err := c.operator()
				if err != nil {
					return err
				}
				ok, err := op.RetryNow(ctx, c.args[0], c.args[1])
				if err != nil {
					return err
				}
				what := queueOrKey(c.args)
				return c.report(result{Action: "retry", Queue: c.args[0], Key: keyOf(c.args), Changed: ok},
					what+" is ready now", what+" was neither retrying nor deferred")
			}
		},
	}
}

func releaseCommand() command {
	return command{
		name:    "release",
		args:    "QUEUE KEY",
		summary: "put a held key back in the ready order",
		doc: `Releases KEY of QUEUE, held by its handler: it goes back to the tail of
the ready order with its attempts started over. A key that was not held
changes nothing: pacer says so and exits 1.`,
		example: "pacer release -postgres postgres://localhost/app emails user-42",
		minArgs: 2, maxArgs: 2,
		bind: func(*flag.FlagSet) action {
			return func(ctx context.Context, c *call) error {
				ok, err := c.st.Release(ctx, c.args[0], c.args[1])
				if err != nil {
					return err
				}
				what := queueOrKey(c.args)
				return c.report(result{Action: "release", Queue: c.args[0], Key: keyOf(c.args), Changed: ok},
					"released "+what, what+" was not held")
			}
		},
	}
}

// dropReason is the error of the dead letter that drop makes without
// -reason.
const dropReason = "dropped by an operator (pacer drop)"

func dropCommand() command {
	return command{
		name:    "drop",
		args:    "QUEUE KEY",
		flags:   "[-reason R]",
		summary: "move all of a key's values to one dead letter",
		doc: `Moves all of KEY's values in QUEUE, those out on a lease and of an open
burst included, to one dead letter with the reason as its error, and ends
the key's lease if one is out (its holder's Finish fails). A pause of the
key stays. A key that holds no values changes nothing: pacer says so and
exits 1.`,
		example: `pacer drop -redis redis://localhost:6379/0 emails user-42 -reason "bounced address"`,
		minArgs: 2, maxArgs: 2,
		bind: func(fs *flag.FlagSet) action {
			reason := fs.String("reason", dropReason, "the dead letter's error")
			return func(ctx context.Context, c *call) error {
				op, err := c.operator()
				if err != nil {
					return err
				}
				n, err := op.DropKey(ctx, c.args[0], c.args[1], *reason)
				if err != nil {
					return err
				}
				what := queueOrKey(c.args)
				return c.report(result{Action: "drop", Queue: c.args[0], Key: keyOf(c.args), Moved: &n, Changed: n > 0},
					fmt.Sprintf("moved %d values of %s to a dead letter", n, what), what+" holds no values")
			}
		},
	}
}
