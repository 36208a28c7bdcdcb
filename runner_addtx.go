package pacer

import (
	"context"
	"errors"
	"fmt"

	"github.com/pacerkit/pacer/internal/engine"
)

// ErrNoTx is returned by AddTx of a Runner whose store cannot add inside a
// transaction: one without a Config.Store, or one whose Store does not
// implement store.TxAdder (pg/pgstore's does).
var ErrNoTx = errors.New("pacer: the Runner's store cannot add inside a transaction")

// AddTx gives v to key inside tx, a transaction of the caller's on the
// database of the Runner's Config.Store, which the caller began and ends:
// v exists, and is handled, if and only if tx commits. A service thus
// stores a change and the work it calls for in one commit, and neither
// happens without the other (the outbox pattern). tx's type is the
// store's: a pgx.Tx for pg/pgstore. The Runner itself does not depend
// on the store's driver.
//
// AddTx encodes key and v as Add does (Config.KeyCodec, Config.Codec) and
// passes the same debounce (Config.Debounce or Adaptive's quiet period,
// and Config.MaxWait): v joins its key's burst, with the values other
// instances add, once tx commits. It sends the store's statement on tx
// and nothing else on tx; with Adaptive, the quiet period may cost a read
// of the store's backlog, on the store's own connections, at most once a
// second per Runner, as for Add.
//
// It returns ctx.Err() if ctx is done, ErrNoTx if the store cannot add
// inside a transaction, ErrClosed once Shutdown began, ErrFull when the
// queue stores Config.MaxValues values, as Add (the store's AddTx says how
// it counts the values of transactions that have not ended), the codec's
// error, and the store's (a tx of the wrong type among them): in all these
// cases v was not added, and the caller should roll tx back or go on
// without v.
// Since only tx's commit decides whether v is added, AddTx counts no value
// received and reports no EventReceived: Stats shows v, from the store,
// once tx committed.
func (r *Runner[K, V]) AddTx(ctx context.Context, tx any, key K, v V) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := r.engine.PutTx(ctx, tx, key, v)
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
