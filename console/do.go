package console

import (
	"errors"
	"fmt"
	"strconv"
)

// do makes the store call of a, and says what it did.
func (q *request) do(a Action) (string, error) {
	ctx := q.r.Context()
	name := strconv.Quote(a.Queue)
	key := ""
	if a.Kind.hasKey() {
		k := q.c.formatKey(a.Queue, a.Key, 60)
		key = k.Text
		if k.Empty {
			key = "(the empty key)"
		} else if !k.Quoted {
			key = strconv.Quote(key)
		}
		if k.Cut {
			key += "…"
		}
	}
	need := func(iface string, ok bool) error {
		if ok {
			return nil
		}
		return errors.New(a.Kind.verb() + ": this store does not implement store." + iface + ".")
	}
	switch a.Kind {
	case PauseQueue, ResumeQueue, PauseKey, ResumeKey, RetryNow, DropKey:
		if err := need("Operator", q.c.op != nil); err != nil {
			return "", err
		}
	case Redrive, Purge:
		if err := need("DeadLetters", q.c.dead != nil); err != nil {
			return "", err
		}
	}
	failed := func(err error) (string, error) {
		return "", fmt.Errorf("%s failed: %w", a.Kind.verb(), err)
	}
	switch a.Kind {
	case PauseQueue:
		ok, err := q.c.op.PauseQueue(ctx, a.Queue)
		if err != nil {
			return failed(err)
		}
		return pick(ok, "Paused queue "+name+".", "Queue "+name+" was paused already."), nil
	case ResumeQueue:
		ok, err := q.c.op.ResumeQueue(ctx, a.Queue)
		if err != nil {
			return failed(err)
		}
		return pick(ok, "Resumed queue "+name+".", "Queue "+name+" was not paused."), nil
	case PauseKey:
		ok, err := q.c.op.PauseKey(ctx, a.Queue, a.Key)
		if err != nil {
			return failed(err)
		}
		return pick(ok, "Paused key "+key+".", "Key "+key+" was paused already."), nil
	case ResumeKey:
		ok, err := q.c.op.ResumeKey(ctx, a.Queue, a.Key)
		if err != nil {
			return failed(err)
		}
		return pick(ok, "Resumed key "+key+".", "Key "+key+" was not paused."), nil
	case RetryNow:
		ok, err := q.c.op.RetryNow(ctx, a.Queue, a.Key)
		if err != nil {
			return failed(err)
		}
		return pick(ok, "Key "+key+" is ready now.", "Key "+key+" was neither retrying nor deferred: nothing changed."), nil
	case Release:
		ok, err := q.c.st.Release(ctx, a.Queue, a.Key)
		if err != nil {
			return failed(err)
		}
		return pick(ok, "Released key "+key+".", "Key "+key+" was not held: nothing changed."), nil
	case DropKey:
		reason := a.Reason
		if reason == "" {
			reason = "dropped from the console"
		}
		n, err := q.c.op.DropKey(ctx, a.Queue, a.Key, reason)
		if err != nil {
			return failed(err)
		}
		if n == 0 {
			return "Key " + key + " held no values: nothing dropped.", nil
		}
		return fmt.Sprintf("Moved %s of key %s to the dead letters.", plural(n, "value"), key), nil
	case Redrive:
		ok, err := q.c.dead.Redrive(ctx, a.Queue, a.DeadLetter)
		if err != nil {
			return failed(err)
		}
		return pick(ok, fmt.Sprintf("Redrove dead letter %d.", a.DeadLetter), fmt.Sprintf("Dead letter %d is gone already.", a.DeadLetter)), nil
	case Purge:
		n, err := q.c.dead.Purge(ctx, a.Queue, q.c.now().Add(-a.Older))
		if err != nil {
			return failed(err)
		}
		return fmt.Sprintf("Purged %s older than %s.", plural(n, "dead letter"), formatAge(a.Older)), nil
	}
	return "", fmt.Errorf("no action is called %q", a.Kind)
}

// pick returns yes when ok and no otherwise.
func pick(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// plural spells n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
