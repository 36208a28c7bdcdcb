package pacer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/jsonfield"
	"github.com/pacerkit/pacer/store"
)

// ErrNoDeadLetters is returned by DeadLetters, Redrive and Purge of a
// Runner that keeps no dead letters: one without a Config.Store, whose
// dropped batches go to OnDrop only, or one whose Store does not implement
// store.DeadLetters.
var ErrNoDeadLetters = errors.New("pacer: the Runner's store keeps no dead letters")

// A DeadLetter is a batch the Runner gave up on, as its Config.Store keeps
// it: see Runner.DeadLetters.
//
// In JSON the key and values are as encoding/json writes K and V, the time
// is in RFC 3339 in UTC, and the errors are their messages, left out when
// there is none. Raw is written only with a DecodeErr: otherwise the key
// and values say all it holds, and it is left zero when read back.
//
//	{"id":7,"key":"alice","values":[{"task":"a1"}],"error":"boom","attempt":3,"at":"2025-03-01T12:00:05.25Z"}
type DeadLetter[K comparable, V any] struct {
	// ID names the dead letter for Redrive; it grows with each dead letter
	// of the queue.
	ID uint64 `json:"id"`
	// Key and Values are the batch, decoded with Config.KeyCodec and
	// Config.Codec. When DecodeErr is set they hold what did decode.
	Key    K   `json:"key"`
	Values []V `json:"values"`
	// Err is why the batch was dropped.
	Err string `json:"error,omitempty"`
	// Attempt is the attempt whose failure dropped the batch.
	Attempt int `json:"attempt"`
	// At is when it was dropped, on the store's clock.
	At time.Time `json:"at,omitzero"`
	// DecodeErr, wrapping ErrUndecodable, says that the key or some values
	// no longer decode (the codec or the type changed since they were
	// stored). Raw has them as stored, so that nothing is lost.
	DecodeErr error `json:"decode_error,omitempty"`
	// Raw is the dead letter as the store keeps it, in bytes.
	Raw store.DeadLetter `json:"raw,omitzero"`
}

// deadLetterFields has the fields and tags of DeadLetter but not its JSON
// methods.
type deadLetterFields[K comparable, V any] DeadLetter[K, V]

// deadLetterJSON is the JSON of a DeadLetter: its fields of the same names
// replace the embedded ones, which encoding/json leaves behind as deeper.
type deadLetterJSON[K comparable, V any] struct {
	*deadLetterFields[K, V]
	At        jsonfield.Time    `json:"at,omitzero"`
	DecodeErr string            `json:"decode_error,omitempty"`
	Raw       *store.DeadLetter `json:"raw,omitempty"`
}

// MarshalJSON writes d as the DeadLetter doc shows.
func (d DeadLetter[K, V]) MarshalJSON() ([]byte, error) {
	j := deadLetterJSON[K, V]{deadLetterFields: (*deadLetterFields[K, V])(&d), At: jsonfield.Time(d.At)}
	if d.DecodeErr != nil {
		j.DecodeErr, j.Raw = d.DecodeErr.Error(), &d.Raw
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes. A decode_error comes back
// as an error with its message that wraps ErrUndecodable.
func (d *DeadLetter[K, V]) UnmarshalJSON(b []byte) error {
	j := deadLetterJSON[K, V]{deadLetterFields: (*deadLetterFields[K, V])(d), At: jsonfield.Time(d.At), Raw: &d.Raw}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	d.At = time.Time(j.At)
	if j.DecodeErr != "" {
		d.DecodeErr = undecodableError(j.DecodeErr)
	}
	return nil
}

// undecodableError is a DecodeErr read back from JSON: its message, still
// wrapping ErrUndecodable.
type undecodableError string

func (e undecodableError) Error() string { return string(e) }
func (undecodableError) Unwrap() error   { return ErrUndecodable }

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
