package redismutex_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// A waiter whose Locker lost its subscription is still woken promptly: the
// Locker subscribes anew and wakes its waiters, which try again, since a
// release may have been missed meanwhile.
func TestWaiterAfterSubscriptionKilled(t *testing.T) {
	t.Parallel()
	const ttl = 20 * time.Second
	cfg := config(t, ttl)
	a := newLocker(t, cfg)
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(t, err)
	opt.ClientName = cfg.Prefix // CLIENT LIST tells its connections by it
	b := newLockerOn(t, redistest.Dial(t, opt), cfg)
	admin := client(t)
	ctx := context.Background()

	held, err := a.TryLock(ctx, "k")
	require.NoError(t, err)
	got := lockLater(t, b, ctx, "k")
	waitMarked(t, cfg, "k")
	var id string
	require.Eventually(t, func() bool {
		id = subscriber(t, admin, opt.ClientName)
		return id != ""
	}, 5*time.Second, time.Millisecond, "b subscribes")
	require.NoError(t, admin.Do(ctx, "CLIENT", "KILL", "ID", id).Err())
	require.NoError(t, held.Unlock(ctx))
	unlocked := time.Now()
	select {
	case l := <-got:
		require.NoError(t, l.Unlock(ctx))
	case <-time.After(ttl / 4):
		t.Fatal("the waiter was not woken")
	}
	require.Less(t, time.Since(unlocked), 2*time.Second, "woken, not timed out")
	require.Eventually(t, func() bool {
		again := subscriber(t, admin, opt.ClientName)
		return again != "" && again != id
	}, 5*time.Second, time.Millisecond, "b subscribed anew")
}

// subscriber returns the id of the subscribed connection named name, or "".
func subscriber(t *testing.T, admin *redis.Client, name string) string {
	list, err := admin.ClientList(context.Background()).Result()
	require.NoError(t, err)
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && f["sub"] == "1" {
			return f["id"]
		}
	}
	return ""
}
