package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

func TestBasics(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	q := "q"
	require.NoError(t, s.Add(ctx, q, "k", [][]byte{[]byte("1"), []byte("2")}, store.AddParams{}))
	ls, next, err := s.Claim(ctx, q, store.ClaimParams{Keys: 2, TTL: time.Minute})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, [][]byte{[]byte("1"), []byte("2")}, ls[0].Values)
	require.Equal(t, 1, ls[0].Attempt)
	require.Positive(t, next)
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 2, Keys: 1, Leased: 1}, st)
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost)
}
