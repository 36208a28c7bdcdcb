package storetest

import (
	"context"
	"fmt"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// notATx is a type no engine takes for a transaction.
type notATx struct{}

// testTxAdder: values added in a transaction that commits are there once
// it commits, in the order added, for every process; values added in one that rolls
// back never were, whether their key was new or leased; AddTx refuses a
// transaction of a type the engine does not take with an error that names
// that type, and changes nothing. Skipped for engines without
// store.TxAdder.
func testTxAdder(f *fixture) {
	ta, ok := f.s.(store.TxAdder)
	if !ok {
		f.t.Skip("the engine does not implement store.TxAdder")
	}
	require.NotNil(f.t, f.beginTx, "the engine implements store.TxAdder: Harness.BeginTx must begin its transactions")
	addTx := func(tx any, key string, vals ...string) error {
		return ta.AddTx(f.ctx, tx, f.q, key, bytesOf(vals), store.AddParams{})
	}

	// Committed: the values are there, for the twin too.
	tx := f.begin()
	require.NoError(f.t, addTx(tx, "k", "1", "2"))
	require.NoError(f.t, addTx(tx, "j", "3"))
	require.NoError(f.t, addTx(tx, "k", "4"))
	require.NoError(f.t, tx.Commit(f.ctx))
	require.Equal(f.t, store.Stats{Values: 4, Keys: 2, Ready: 2}, f.stats())
	ls, _, err := f.twin.Claim(f.ctx, f.q, store.ClaimParams{Keys: 3, TTL: ttl})
	require.NoError(f.t, err)
	require.ElementsMatch(f.t, []string{"k", "j"}, keysOf(ls), "keys of a committed transaction")
	if ls[0].Key != "k" { // both became ready at the commit: either may come first
		ls[0], ls[1] = ls[1], ls[0]
	}
	f.values(ls[0], "k", "1", "2", "4")
	f.values(ls[1], "j", "3")

	// Rolled back: nothing was added, behind a lease or to a new key.
	before := f.stats()
	tx = f.begin()
	require.NoError(f.t, addTx(tx, "k", "5"))
	require.NoError(f.t, addTx(tx, "n", "6"))
	require.NoError(f.t, tx.Rollback(f.ctx))
	require.Equal(f.t, before, f.stats(), "a rolled back transaction added values")
	f.ack(ls[0], false)
	f.ack(ls[1], false)
	_, next := f.claim(one())
	require.Equal(f.t, store.Never, next, "a rolled back transaction scheduled a key")

	// Another type: refused, naming it, and nothing changes.
	for _, tx := range []any{nil, notATx{}, f.s} {
		err := addTx(tx, "w", "7")
		require.Error(f.t, err, "AddTx took a %T for a transaction", tx)
		require.ErrorContains(f.t, err, fmt.Sprintf("%T", tx), "AddTx's error names the type it refused")
		require.NotErrorIs(f.t, err, store.ErrFull)
	}
	require.Equal(f.t, store.Stats{}, f.stats(), "a refused AddTx changed something")
}

// begin begins a transaction with Harness.BeginTx.
func (f *fixture) begin() Tx {
	f.t.Helper()
	tx, err := f.beginTx(f.ctx)
	require.NoError(f.t, err, "Harness.BeginTx")
	// After Commit or Rollback, a no-op; t's ctx is done by then.
	f.t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}
