package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// ErrDelayDebounced is returned by AddAfter, AddAt and AddTxAfter of a
// Runner with Config.Debounce or Config.Adaptive: a delayed value does not
// join a burst. A burst's deadline moves with every value that joins it,
// so a value with a time of its own would make a key's readiness depend
// on both, which the engines cannot keep exactly in one step; the Runner
// refuses the combination rather than blur either.
var ErrDelayDebounced = engine.ErrDelayDebounced

// AddAfter gives v to key, not to be handled before d has passed: as
// client-go's workqueue AddAfter, and asynq's ProcessIn. v is accepted
// now, counted in Config.MaxValues from now, and waits in order: the
// values of key added after it wait behind it, so a key's values still
// reach the handler in Add order. A batch takes the key's values that are
// due, from its head, and stops before the first that is not; the key is
// ready when its first value is due, and then takes its place in the
// ready order behind the keys already waiting. v may run late (behind
// other keys, or for the Limiter or the Window), never early.
//
// d is measured on the engine's clock: the Runner's Config.Clock in the
// process, the server's with a Config.Store, from when the engine stores
// v. A d of 0 or less is Add. AddAfter needs a Runner without Debounce or
// Adaptive (ErrDelayDebounced).
//
// In the process, a Shutdown does not wait for delayed values: those not
// due yet, with the values of their keys behind them, go to OnDrop with
// ErrClosed, as held keys do. With a Config.Store they stay in the store,
// for the next Runner.
//
// It returns what Add returns, and ErrDelayDebounced; in all these cases
// v was not accepted.
func (r *Runner[K, V]) AddAfter(ctx context.Context, key K, v V, d time.Duration) error {
	if d <= 0 {
		return r.Add(ctx, key, v)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.closed.Load() {
		return ErrClosed
	}
	if err := r.engine.PutAfter(ctx, key, v, d); err != nil {
		if errors.Is(err, store.ErrFull) {
			r.c.refused.Add(1)
		}
		return putErr(err)
	}
	r.c.received.Add(1)
	r.emit(EventReceived, key, 0, 1, 0, 0, nil)
	r.logf(slog.LevelDebug, "pacer: delayed value received", key, slog.Duration("delay", d))
	return nil
}

// AddAt gives v to key, not to be handled before t: it is AddAfter with
// the delay from now to t on the Runner's clock (Config.Clock). The
// delay, not t, is what reaches the engine, so a shared engine, which
// times values on its server's clock, keeps the interval the caller meant
// whatever the skew between the Runner's clock and the server's: v is due
// when the server's clock has moved on by t minus the Runner's now. A t
// not after now is Add.
func (r *Runner[K, V]) AddAt(ctx context.Context, key K, v V, t time.Time) error {
	return r.AddAfter(ctx, key, v, t.Sub(r.clk.Now()))
}

// AddTxAfter is AddTx for a value not to be handled before d has passed
// since tx's statement ran, as AddAfter says: the value exists if and
// only if tx commits, and is due d after the store's clock read the
// statement, not the commit. A d of 0 or less is AddTx. It returns what
// AddTx returns, and ErrDelayDebounced.
func (r *Runner[K, V]) AddTxAfter(ctx context.Context, tx any, key K, v V, d time.Duration) error {
	if d <= 0 {
		return r.AddTx(ctx, tx, key, v)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := r.engine.PutTxAfter(ctx, tx, key, v, d)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, engine.ErrNoTx):
		return putErr(err)
	case r.cfg.Store == nil:
		return fmt.Errorf("%w: Config.Store is nil", ErrNoTx)
	}
	return fmt.Errorf("%w: %T does not implement store.TxAdder", ErrNoTx, r.cfg.Store)
}
