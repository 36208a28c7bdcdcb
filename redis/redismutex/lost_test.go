package redismutex_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/redis/redismutex"
)

// A cuttable is a client whose network can be cut: its connections close,
// and it dials no more.
type cuttable struct {
	*redis.Client
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func newCuttable(t *testing.T) *cuttable {
	t.Helper()
	client(t) // skips without Redis
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(t, err)
	c := &cuttable{}
	var d net.Dialer
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.cut {
			return nil, errors.New("network cut")
		}
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil {
			c.conns = append(c.conns, conn)
		}
		return conn, err
	}
	opt.MaxRetries = -1 // fail at once, as a partition would not
	c.Client = redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (c *cuttable) cutNetwork() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}

// TestLockLostWhenPartitioned cuts a holder off Redis: it gives the lock
// up, cancelling its Context with ErrLockLost, before Redis expires the
// lock, so before another holder can take it; the other takes it once
// it expired, with a bigger fence.
func TestLockLostWhenPartitioned(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	cfg := config(t, ttl)
	c := newCuttable(t)
	a := newLockerOn(t, c, cfg)
	b := newLocker(t, cfg)
	observer := client(t)
	ctx := context.Background()

	l, err := a.TryLock(ctx, "k")
	require.NoError(t, err)
	held := l.Context()

	time.Sleep(ttl / 2) // one renewal
	c.cutNetwork()
	select {
	case <-held.Done():
	case <-time.After(3 * ttl):
		t.Fatal("the partitioned holder did not give the lock up")
	}
	require.ErrorIs(t, context.Cause(held), redismutex.ErrLockLost)
	left, err := observer.PTTL(ctx, lockKey(cfg, "k")).Result()
	require.NoError(t, err)
	require.Positive(t, left, "the holder gave the lock up before Redis expired it")
	t.Logf("given up at least %v before Redis expires the lock", left)

	_, err = b.TryLock(ctx, "k")
	require.ErrorIs(t, err, redismutex.ErrLocked, "the lock is not free before it expires")
	wctx, cancel := context.WithTimeout(ctx, 5*ttl)
	defer cancel()
	next, err := b.LockContext(wctx, "k")
	require.NoError(t, err)
	require.Greater(t, next.Fence(), l.Fence())
	require.ErrorIs(t, l.Unlock(ctx), redismutex.ErrLockLost, "Unlock of a lost lock")
	require.NoError(t, next.Unlock(ctx))
}
