package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// txStore is store.Memory that can also add inside a transaction of its
// own kind, a *memTx, whose values reach the store when it commits. It
// records every Add and AddTx as it was called.
type txStore struct {
	*store.Memory
	mu    sync.Mutex
	adds  []addCall
	addTx []addCall
}

// addCall is one Add or AddTx as a txStore saw it.
type addCall struct {
	Queue, Key string
	Vals       [][]byte
	P          store.AddParams
}

// memTx is a txStore's transaction: the adds it holds run at commit.
type memTx struct{ adds []func() error }

func (tx *memTx) commit() error {
	for _, add := range tx.adds {
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}

func newTxStore() *txStore { return &txStore{Memory: store.NewMemory(store.MemoryConfig{})} }

func (s *txStore) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	s.mu.Lock()
	s.adds = append(s.adds, addCall{queue, key, vals, p})
	s.mu.Unlock()
	return s.Memory.Add(ctx, queue, key, vals, p)
}

func (s *txStore) AddTx(_ context.Context, tx any, queue, key string, vals [][]byte, p store.AddParams) error {
	mtx, ok := tx.(*memTx)
	if !ok {
		return fmt.Errorf("txStore: AddTx needs a *memTx, got %T", tx)
	}
	s.mu.Lock()
	s.addTx = append(s.addTx, addCall{queue, key, vals, p})
	s.mu.Unlock()
	mtx.adds = append(mtx.adds, func() error { return s.Memory.Add(context.Background(), queue, key, vals, p) })
	return nil
}

var _ store.TxAdder = (*txStore)(nil)

// AddTx needs a store that takes part in transactions, and says which
// one the Runner has instead.
func TestAddTxNeedsTxAdder(t *testing.T) {
	h := func(context.Context, string, []int) error { return nil }
	inProcess, err := pacer.New(pacer.Config[string, int]{}, h)
	require.NoError(t, err)
	defer inProcess.Shutdown(context.Background()) //nolint:errcheck // nothing to drain
	err = inProcess.AddTx(t.Context(), &memTx{}, "k", 1)
	require.ErrorIs(t, err, pacer.ErrNoTx)
	require.ErrorContains(t, err, "Config.Store is nil")

	memory, err := pacer.New(pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q"}, h)
	require.NoError(t, err)
	defer memory.Shutdown(context.Background()) //nolint:errcheck // nothing to drain
	err = memory.AddTx(t.Context(), &memTx{}, "k", 1)
	require.ErrorIs(t, err, pacer.ErrNoTx)
	require.ErrorContains(t, err, "*store.Memory does not implement store.TxAdder")
}

// A value added with AddTx is handled if its transaction commits, and
// never if it rolls back; a Runner counts neither as received, since
// only the commit decides.
func TestAddTxCommitOrRollback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		st := newTxStore()
		r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", OnEvent: rc.onEvent}, rc.handle)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()

		committed, rolledBack := &memTx{}, &memTx{}
		require.NoError(t, r.AddTx(t.Context(), committed, "a", 1))
		require.NoError(t, r.AddTx(t.Context(), rolledBack, "b", 2))
		require.NoError(t, r.AddTx(t.Context(), committed, "a", 3))
		time.Sleep(time.Minute)
		synctest.Wait()
		rc.mu.Lock()
		require.Empty(t, rc.calls, "handled before the commit")
		rc.mu.Unlock()

		require.NoError(t, committed.commit())
		// rolledBack is dropped: its adds never run.
		time.Sleep(time.Minute)
		synctest.Wait()
		require.NoError(t, r.Shutdown(context.Background()))
		require.NoError(t, <-done)

		rc.mu.Lock()
		defer rc.mu.Unlock()
		require.Len(t, rc.calls, 1)
		require.Equal(t, "a", rc.calls[0].Key)
		require.Equal(t, []int{1, 3}, rc.calls[0].Batch)
		for _, e := range rc.events {
			require.NotEqual(t, pacer.EventReceived, e.Kind)
		}
		s := stats(t, r)
		require.Zero(t, s.Received)
		require.Equal(t, uint64(2), s.Handled)
		require.Zero(t, s.Values, "the store is empty")
	})
}

// AddTx stores what Add would: the key and the value encoded by the
// Runner's codecs, under its queue, with its debounce; only the
// transaction differs.
func TestAddTxEncodesAsAdd(t *testing.T) {
	st := newTxStore()
	r, err := pacer.New(pacer.Config[int, []string]{
		Store: st, Name: "tx-queue", Codec: upper{},
		Debounce: 2 * time.Second, MaxWait: 7 * time.Second,
	}, func(context.Context, int, [][]string) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(context.Background()) //nolint:errcheck // nothing runs
	tx := &memTx{}
	require.NoError(t, r.AddTx(t.Context(), tx, 42, []string{"x", "y"}))
	require.NoError(t, r.Add(t.Context(), 42, []string{"x", "y"}))
	st.mu.Lock()
	defer st.mu.Unlock()
	require.Equal(t, []addCall{{"tx-queue", "42", [][]byte{[]byte("X,Y")}, store.AddParams{Wait: 2 * time.Second, MaxWait: 7 * time.Second}}}, st.addTx)
	require.Equal(t, st.addTx, st.adds)
	require.Len(t, tx.adds, 1)
}

// upper encodes a []string as its upper-cased values joined by commas, and
// refuses an empty one.
type upper struct{}

func (upper) Encode(v []string) ([]byte, error) {
	if len(v) == 0 {
		return nil, errors.New("upper: nothing to encode")
	}
	out := ""
	for i, s := range v {
		if i > 0 {
			out += ","
		}
		for _, c := range s {
			out += string(c - 'a' + 'A')
		}
	}
	return []byte(out), nil
}

func (upper) Decode(b []byte) ([]string, error) { return []string{string(b)}, nil }

// AddTx adds nothing, and says why, when its ctx is done, a codec fails,
// the store refuses the transaction, or Shutdown began.
func TestAddTxRefusals(t *testing.T) {
	st := newTxStore()
	r, err := pacer.New(pacer.Config[int, []string]{Store: st, Name: "q", Codec: upper{}},
		func(context.Context, int, [][]string) error { return nil })
	require.NoError(t, err)
	tx := &memTx{}

	done, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, r.AddTx(done, tx, 1, []string{"a"}), context.Canceled)
	require.ErrorContains(t, r.AddTx(t.Context(), tx, 1, nil), "pacer: Config.Codec cannot encode a value of key 1: upper: nothing to encode")
	require.EqualError(t, r.AddTx(t.Context(), "not a tx", 1, []string{"a"}), "txStore: AddTx needs a *memTx, got string")
	require.NoError(t, r.Shutdown(context.Background()))
	require.ErrorIs(t, r.AddTx(t.Context(), tx, 1, []string{"a"}), pacer.ErrClosed)

	require.Empty(t, tx.adds)
	require.Empty(t, st.addTx)
}
