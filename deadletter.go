package pacer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// ErrNoDeadLetters is returned by DeadLetters, Redrive and Purge of a
// Runner that keeps no dead letters: one without a Config.Store, whose
// dropped batches go to OnDrop only, or one whose Store does not implement
// store.DeadLetters.
var ErrNoDeadLetters = errors.New("pacer: the Runner's store keeps no dead letters")

// A DeadLetter is a batch the Runner gave up on, as its Config.Store keeps
// it: see Runner.DeadLetters.
type DeadLetter[K comparable, V any] struct {
	// ID names the dead letter for Redrive; it grows with each dead letter
	// of the queue.
	ID uint64
	// Key and Values are the batch, decoded with Config.KeyCodec and
	// Config.Codec. When DecodeErr is set they hold what did decode.
	Key    K
	Values []V
	// Err is why the batch was dropped.
	Err string
	// Attempt is the attempt whose failure dropped the batch.
	Attempt int
	// At is when it was dropped, on the store's clock.
	At time.Time
	// DecodeErr, wrapping ErrUndecodable, says that the key or some values
	// no longer decode (the codec or the type changed since they were
	// stored). Raw has them as stored, so that nothing is lost.
	DecodeErr error
	// Raw is the dead letter as the store keeps it, in bytes.
	Raw store.DeadLetter
}

// deadLettersErr returns the error of op for err, the engine's:
// ErrNoDeadLetters when it keeps none.
func deadLettersErr(op string, err error) error {
	if errors.Is(err, engine.ErrNoDeadLetters) {
		return ErrNoDeadLetters
	}
	return fmt.Errorf("pacer: %s: %w", op, err)
}

// DeadLetters returns up to limit of the batches that the Runners of the
// queue (Config.Name) gave up on, oldest first, starting after the one
// with ID after (0: from the oldest): page with the ID of the last one
// returned. A dead letter whose key or values no longer decode is
// returned all the same, with DecodeErr and its raw bytes. It returns
// ErrNoDeadLetters when the Runner's store keeps none, and the store's
// error when it fails. It works whether or not the Runner runs, and after
// Shutdown while the store is open.
func (r *Runner[K, V]) DeadLetters(ctx context.Context, after uint64, limit int) ([]DeadLetter[K, V], error) {
	dead, err := r.engine.DeadLetters(ctx, after, limit)
	if err != nil {
		return nil, deadLettersErr("dead letters", err)
	}
	out := make([]DeadLetter[K, V], len(dead))
	for i, d := range dead {
		out[i] = DeadLetter[K, V](d) // the engine decoded it, field for field
	}
	return out, nil
}

// Redrive puts the values of the dead letter id back at the tail of its
// key, ready at once (behind the values the key has now, with no
// debounce), and removes the dead letter; they are then handled as new
// values, at attempt 1, by whichever Runner of the queue leases the key.
// It reports whether the dead letter existed. It returns ErrNoDeadLetters
// when the Runner's store keeps none.
func (r *Runner[K, V]) Redrive(ctx context.Context, id uint64) (bool, error) {
	ok, err := r.engine.Redrive(ctx, id)
	if err != nil {
		return false, deadLettersErr("redrive", err)
	}
	return ok, nil
}

// Purge removes the dead letters of the queue dropped before t, on the
// store's clock, and returns how many it removed. It returns
// ErrNoDeadLetters when the Runner's store keeps none.
func (r *Runner[K, V]) Purge(ctx context.Context, before time.Time) (int, error) {
	n, err := r.engine.Purge(ctx, before)
	if err != nil {
		return 0, deadLettersErr("purge", err)
	}
	return n, nil
}
