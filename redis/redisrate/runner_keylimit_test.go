package redisrate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestRunnerKeyLimitAcrossInstances: two Runners, each with its own
// client, share a Keyed's per-key buckets as their Config.KeyLimit. The
// calls of one key, counted over both Runners, keep the key's rate (one
// every 100 ms), while other keys of the same Keyed run at once on each
// of them: the last of their values runs before the limited key's last,
// which its 12 tokens hold back for 1.1 s.
func TestRunnerKeyLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.KeyedConfig{Rate: 10, Burst: 1, Name: "accounts", Prefix: p}
	const per = 6 // values of "acct" per Runner

	var mu sync.Mutex
	var acct []storetest.TokenCall
	others := 0
	acctWhenOthersDone := -1 // acct's calls when the last other key ran
	// Each Runner has its own gate, and runs at most one batch of acct at
	// a time: its gate's last take of acct is the one its call spends.
	handler := func(g *bracket) pacer.Handler[string, int] {
		return func(_ context.Context, key string, _ []int) error {
			started := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if key == "acct" {
				acct = append(acct, storetest.TokenCall{Asked: g.asked(), Started: started})
			} else {
				others++
				if others == 2*per {
					acctWhenOthersDone = len(acct)
				}
			}
			return nil
		}
	}
	ctx := context.Background()
	var runners []*pacer.Runner[string, int]
	for _, c := range []*redis.Client{c1, c2} {
		g := &bracket{KeyGate: newKeyed(t, c, cfg), key: "acct"}
		r, err := pacer.New(pacer.Config[string, int]{
			Workers:  2,
			MaxBatch: 1,
			KeyLimit: g,
		}, handler(g))
		require.NoError(t, err)
		for i := range per {
			require.NoError(t, r.Add(ctx, "acct", i))
			require.NoError(t, r.Add(ctx, "other"+string(rune('a'+i)), i))
		}
		runners = append(runners, r)
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(func() { _ = r.Run(runCtx) })
	}
	eventually(t, "every other key to run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return others == 2*per
	})
	for _, r := range runners {
		require.NoError(t, r.Shutdown(ctx)) // handles every value left
	}
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, acct, 2*per)
	// 12 tokens at 10 a second take 1.1 s; the other keys need none of
	// them, and a worker waits for none: had they queued behind acct's
	// deferred batches, they would have run after its last.
	require.Less(t, acctWhenOthersDone, 2*per, "the other keys waited for acct's tokens")
	// The server's clock decides; each call's token was taken between its
	// bracket's readings, on either instance.
	storetest.CheckRate(t, "acct", acct, cfg.Rate, cfg.Burst)
	for i, r := range runners {
		st, err := r.Stats(ctx)
		require.NoError(t, err)
		require.NotZero(t, st.KeyLimited, "runner %d never deferred acct", i)
	}
}

// bracket is a KeyGate that notes when its last successful take of key
// was asked, so that a call's token is bracketed by that reading and the
// call's start (storetest.CheckRate).
type bracket struct {
	ratelimit.KeyGate[string]
	key string
	mu  sync.Mutex
	at  time.Time
}

func (b *bracket) TakeKey(ctx context.Context, key string) (time.Duration, error) {
	asked := time.Now()
	wait, err := b.KeyGate.TakeKey(ctx, key)
	if err == nil && wait == 0 && key == b.key {
		b.mu.Lock()
		b.at = asked
		b.mu.Unlock()
	}
	return wait, err
}

func (b *bracket) asked() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at
}
