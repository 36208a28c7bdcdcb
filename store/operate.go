package store

import "context"

// Operator is implemented by engines that let an operator steer what they
// hold. Each call takes effect in every process that shares the engine: a
// pause made from one process (a CLI, a console) stops the claims of all
// of them. No call waits for a handler: a lease already out runs on and
// ends as usual, except after DropKey, which ends it.
//
// A pause is kept by the engine, not by a process: it outlives the process
// that made it and the values of the key, until the matching resume.
// Every call costs O(log n) in the keys of the queue, plus, for DropKey,
// O(values) of the key; QueuePaused costs O(1) whatever the queue holds.
type Operator interface {
	// PauseQueue stops every process from leasing queue's keys until
	// ResumeQueue: Claim and FinishAndClaim lease nothing while it is
	// paused (FinishAndClaim still finishes) and say Never. Adds, Finishes,
	// Releases and the clocks of bursts and retries go on as usual.
	// It reports whether the queue was running.
	PauseQueue(ctx context.Context, queue string) (bool, error)
	// ResumeQueue ends PauseQueue, and wakes the Waits of every process.
	// It reports whether the queue was paused.
	ResumeQueue(ctx context.Context, queue string) (bool, error)
	// QueuePaused reports whether queue is paused: PauseQueue, and no
	// ResumeQueue since. It is Stats.Paused without the counts, which may
	// visit every key of the queue, for a tool that needs the pause alone
	// (an explanation of one key). It changes nothing.
	QueuePaused(ctx context.Context, queue string) (bool, error)

	// PauseKey stops every process from leasing key until ResumeKey,
	// whether or not the key holds values now: values added meanwhile wait
	// too. A lease of the key that is out runs on; when it ends with
	// values left, the key waits. Its bursts and retry delays go on
	// running, so that a resumed key whose delay passed is ready at once.
	// It reports whether the key was not paused already.
	PauseKey(ctx context.Context, queue, key string) (bool, error)
	// ResumeKey ends PauseKey: the key goes back to what its values are
	// doing, a key that came ready meanwhile behind the keys ready now (at
	// the tail of the ready order, wherever it stood before the pause:
	// one that was ready when paused goes there too), and the Waits of
	// every process wake. It reports whether the key was paused.
	ResumeKey(ctx context.Context, queue, key string) (bool, error)

	// RetryNow makes a Retrying or Deferred key ready now, at the tail of
	// the ready order, with its batch and its Attempt as they are. It
	// reports whether the key was retrying or deferred; any other key is
	// left as it is.
	RetryNow(ctx context.Context, queue, key string) (bool, error)

	// DropKey moves all of key's values, those of a lease and of an open
	// burst included, to one dead letter with reason as its Err, in Add
	// order, and ends the key's lease if one is out: its holder's Extend
	// and Finish return ErrLeaseLost. The dead letter's Attempt is the
	// key's KeyInfo.Attempt (0 when its head batch was never leased). The
	// key then holds no values; a pause of the key stays. It returns how
	// many values it moved (0, and no dead letter, for a key that holds
	// none).
	DropKey(ctx context.Context, queue, key, reason string) (int, error)
}
