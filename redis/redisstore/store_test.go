package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

func TestNewChecksConfig(t *testing.T) {
	_, err := redisstore.New(t.Context(), nil, redisstore.Config{})
	require.ErrorContains(t, err, "redisstore: nil client")
	_, err = redisstore.New(t.Context(), redistest.Unreachable(t), redisstore.Config{Prefix: "a{b}"})
	require.ErrorContains(t, err, "Config.Prefix", "the Config is checked first")
	s, err := redisstore.New(t.Context(), client(t), redisstore.Config{})
	require.NoError(t, err)
	err = s.Add(t.Context(), "q}", "k", [][]byte{[]byte("v")}, store.AddParams{})
	require.ErrorContains(t, err, "queue name")
	require.NoError(t, s.Close())
}

// TestNewUnreachable: New of a wrong address, tried as a new user would
// (go-redis' default options, whose retries take about 1.7 s), fails at
// once, well before a ctx of a second ends, with the address and what is
// missing.
func TestNewUnreachable(t *testing.T) {
	c := redistest.Unreachable(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	s, err := redisstore.New(ctx, c, redisstore.Config{})
	require.ErrorContains(t, err, "redisstore: "+c.Options().Addr+": not reachable: dial tcp ")
	require.Nil(t, s)
	require.NoError(t, ctx.Err(), "New waited for ctx's deadline")
}

// TestKeysFollowActiveKeys: once every key of a queue emptied, whatever
// went on before, only the queue's bookkeeping (and the Store's list of
// queues) is left in Redis: its index of keys is gone with them.
func TestKeysFollowActiveKeys(t *testing.T) {
	s, c, p := newStore(t)
	ctx := t.Context()
	q := "q"
	for i := range 50 {
		k := fmt.Sprint(i % 10)
		wait := store.AddParams{}
		if i%3 == 0 {
			wait = store.AddParams{Wait: time.Millisecond}
		}
		require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte(fmt.Sprint(i))}, wait))
	}
	held, deferred := false, false
	for {
		ls, next, err := s.Claim(ctx, q, store.ClaimParams{Keys: 3, MaxBatch: 2, TTL: time.Minute})
		require.NoError(t, err)
		if len(ls) == 0 {
			if next == store.Never {
				break
			}
			require.NoError(t, s.Wait(ctx, q, next))
			continue
		}
		for _, l := range ls {
			o := store.Outcome{Kind: store.Ack}
			switch {
			case l.Attempt == 1 && l.Key == "3":
				o = store.Outcome{Kind: store.Retry, After: time.Millisecond}
			case !deferred && l.Key == "4":
				o, deferred = store.Outcome{Kind: store.Defer}, true
			case !held && l.Key == "5":
				o, held = store.Outcome{Kind: store.Hold}, true
			}
			_, err := s.Finish(ctx, l, o)
			require.NoError(t, err)
		}
		_, err = s.Release(ctx, q, "5") // held a moment, then back in line
		require.NoError(t, err)
	}
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, store.Stats{}, st)
	left := scan(t, c, p)
	for _, k := range left {
		if k == redisname.KeyPrefix(p)+"queues" {
			continue // the Store's list of queues
		}
		require.Contains(t, []string{"meta", "wake"}, strings.TrimPrefix(k, redisname.KeyPrefix(p, q)), "key %q is left", k)
	}
}

// TestWaitUsesLocalTimer: a Wait shorter than Redis' timeout resolution
// (100 ms) ends on time, and leaves nothing behind.
func TestWaitUsesLocalTimer(t *testing.T) {
	s, c, p := newStore(t)
	for _, d := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 1100 * time.Millisecond} {
		start := time.Now()
		require.NoError(t, s.Wait(t.Context(), "q", d))
		took := time.Since(start)
		require.GreaterOrEqual(t, took, d)
		require.Less(t, took, d+time.Second/2, "Wait(%v) took %v", d, took)
	}
	require.Empty(t, scan(t, c, p))
}

// TestWaitEndsWithCtx: a blocked Wait returns ctx's error as soon as ctx
// ends, and leaves nothing behind.
func TestWaitEndsWithCtx(t *testing.T) {
	s, c, p := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	err := s.Wait(ctx, "q", time.Hour)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), time.Second)
	require.Empty(t, scan(t, c, p))
}

// TestWaitHearsOtherProcesses: a Wait of one Store returns when another
// Store on the same Redis adds a value, finishes a lease or leases a key
// whose lease could lapse before anything else is due.
func TestWaitHearsOtherProcesses(t *testing.T) {
	a, _, p := newStore(t)
	b, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: p})
	require.NoError(t, err)
	defer b.Close()
	ctx := t.Context()
	q := "q"
	waitFor := func(change func()) time.Duration {
		t.Helper()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- a.Wait(ctx, q, time.Hour) }()
		time.Sleep(20 * time.Millisecond) // let the Wait block
		change()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("Wait did not hear the change")
		}
		return time.Since(start)
	}
	waitFor(func() { require.NoError(t, b.Add(ctx, q, "k", [][]byte{[]byte("1")}, store.AddParams{})) })
	var l store.Lease
	waitFor(func() {
		ls, _, err := b.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: 50 * time.Millisecond})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		l = ls[0]
	})
	// The holder stops; a Claim after the TTL takes the batch over.
	ls, next, err := a.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Empty(t, ls)
	require.LessOrEqual(t, next, 50*time.Millisecond)
	require.NoError(t, a.Wait(ctx, q, next))
	ls, _, err = a.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, 2, ls[0].Attempt)
	require.Greater(t, ls[0].Fence, l.Fence)
	require.NoError(t, b.Add(ctx, q, "k", [][]byte{[]byte("2")}, store.AddParams{}))
	waitFor(func() {
		_, err := a.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	})
}

func TestClose(t *testing.T) {
	s, _, _ := newStore(t)
	done := make(chan error, 1)
	go func() { done <- s.Wait(context.Background(), "q", time.Hour) }()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, s.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, store.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the Wait")
	}
	require.NoError(t, s.Close())
	ctx := t.Context()
	require.ErrorIs(t, s.Add(ctx, "q", "k", [][]byte{[]byte("1")}, store.AddParams{}), store.ErrClosed)
	_, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Second})
	require.ErrorIs(t, err, store.ErrClosed)
	require.ErrorIs(t, s.Wait(ctx, "q", time.Second), store.ErrClosed)
	_, err = s.Stats(ctx, "q")
	require.ErrorIs(t, err, store.ErrClosed)
}

// TestUnreachable: once the server is gone, Add fails at once, saying so,
// with a client that does not retry (go-redis by default retries a
// command three times and a dial five times, for about 1.7 s in all).
func TestUnreachable(t *testing.T) {
	srv := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	s, err := redisstore.New(t.Context(), c, redisstore.Config{})
	require.NoError(t, err)
	defer s.Close()
	srv.Stop()
	start := time.Now()
	err = s.Add(t.Context(), "q", "k", [][]byte{[]byte("1")}, store.AddParams{})
	var op *net.OpError
	require.True(t, errors.As(err, &op), "got %v", err)
	require.True(t, strings.HasPrefix(err.Error(), "redisstore: add: "), err.Error())
	require.Less(t, time.Since(start), 100*time.Millisecond)
}

// TestClaimHandsOnTheTimer: a worker that took a wake-up and then leased a
// key no longer waits for the next key due, so its Claim wakes a waiting
// worker to wait for it instead.
func TestClaimHandsOnTheTimer(t *testing.T) {
	s, c, p := newStore(t)
	ctx := t.Context()
	q := "q"
	require.NoError(t, s.Add(ctx, q, "later", [][]byte{[]byte("1")}, store.AddParams{Wait: time.Minute}))
	require.NoError(t, s.Add(ctx, q, "now", [][]byte{[]byte("1")}, store.AddParams{}))
	require.NoError(t, c.Del(ctx, redisname.KeyPrefix(p, q)+"wake").Err()) // this worker took the wake-up
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx, q, time.Hour) }() // another, waiting for ever
	time.Sleep(20 * time.Millisecond)
	ls, next, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Hour})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Greater(t, next, 50*time.Second)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting worker was not woken to wait for the burst")
	}
}

// TestLoadsItsFunctions: the Store loads its function library into a
// server that lacks it, at New and again at a call after the library was
// deleted, and the calls then go through.
func TestLoadsItsFunctions(t *testing.T) {
	c := benchClient(t, redistest.StartServer(t).Addr())
	s, err := redisstore.New(t.Context(), c, redisstore.Config{})
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	libraries := func() []string {
		t.Helper()
		ls, err := c.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		require.NoError(t, err)
		var names []string
		for _, l := range ls {
			names = append(names, l.Name)
		}
		return names
	}
	names := libraries()
	require.Len(t, names, 1, "New loads the library")
	require.True(t, strings.HasPrefix(names[0], "pacer_"), names[0])
	require.NoError(t, c.FunctionDelete(ctx, names[0]).Err())
	require.NoError(t, s.Add(ctx, "q", "k", [][]byte{[]byte("1")}, store.AddParams{}))
	require.Equal(t, names, libraries())

	require.NoError(t, c.FunctionDelete(ctx, names[0]).Err())
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, [][]byte{[]byte("1")}, ls[0].Values)
	require.Equal(t, names, libraries())
}

// TestLeaseForEver: a lease whose TTL is for ever holds, can be extended
// for ever, and ends.
func TestLeaseForEver(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	require.NoError(t, s.Add(ctx, "q", "k", [][]byte{[]byte("1"), []byte("2")}, store.AddParams{}))
	ls, next, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: store.Never})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, store.Never, next)
	require.NoError(t, s.Extend(ctx, ls[0], store.Never))
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.True(t, more)
}
