package console

import (
	"fmt"
	"time"
)

// ActionKind names what an Action does.
type ActionKind string

// The actions of the console, each one store call.
const (
	PauseQueue  ActionKind = "pause-queue"  // store.Operator.PauseQueue
	ResumeQueue ActionKind = "resume-queue" // store.Operator.ResumeQueue
	PauseKey    ActionKind = "pause-key"    // store.Operator.PauseKey
	ResumeKey   ActionKind = "resume-key"   // store.Operator.ResumeKey
	RetryNow    ActionKind = "retry-now"    // store.Operator.RetryNow
	Release     ActionKind = "release"      // store.Store.Release
	DropKey     ActionKind = "drop-key"     // store.Operator.DropKey
	Redrive     ActionKind = "redrive"      // store.DeadLetters.Redrive
	Purge       ActionKind = "purge"        // store.DeadLetters.Purge
)

// An Action is what an operator asks the console to do, as
// Config.Authorize sees it before the console does it.
type Action struct {
	Kind  ActionKind
	Queue string
	// Key is the key of PauseKey, ResumeKey, RetryNow, Release and
	// DropKey; "" for the others (and a key may be "").
	Key string
	// DeadLetter is the ID of the dead letter of Redrive.
	DeadLetter uint64
	// Older is the age of Purge: the dead letters dropped more than Older
	// ago are removed.
	Older time.Duration
	// Reason is the error that DropKey keeps with the dead letter.
	Reason string
}

// hasKey reports whether the action is about one key.
func (k ActionKind) hasKey() bool {
	switch k {
	case PauseKey, ResumeKey, RetryNow, Release, DropKey:
		return true
	}
	return false
}

// known reports whether k is one of the console's actions.
func (k ActionKind) known() bool {
	switch k {
	case PauseQueue, ResumeQueue, Redrive, Purge:
		return true
	}
	return k.hasKey()
}

// verb is how a button or a confirmation names the action.
func (k ActionKind) verb() string {
	switch k {
	case PauseQueue:
		return "Pause queue"
	case ResumeQueue:
		return "Resume queue"
	case PauseKey:
		return "Pause key"
	case ResumeKey:
		return "Resume key"
	case RetryNow:
		return "Retry now"
	case Release:
		return "Release"
	case DropKey:
		return "Drop to dead letters"
	case Redrive:
		return "Redrive"
	case Purge:
		return "Purge dead letters"
	}
	return string(k)
}

// String describes the action in one line, for logs and audit trails.
func (a Action) String() string {
	switch {
	case a.Kind.hasKey():
		return fmt.Sprintf("%s queue=%q key=%q", a.Kind, a.Queue, a.Key)
	case a.Kind == Redrive:
		return fmt.Sprintf("%s queue=%q dead_letter=%d", a.Kind, a.Queue, a.DeadLetter)
	case a.Kind == Purge:
		return fmt.Sprintf("%s queue=%q older=%s", a.Kind, a.Queue, a.Older)
	}
	return fmt.Sprintf("%s queue=%q", a.Kind, a.Queue)
}
