package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// keyRatePaths are the claim paths of pgstore, each of which keeps a
// KeyRate: the plain claim, the claims of a queue with tenants, and those
// of keys of lanes (PerKey > 1), with and without tenants.
var keyRatePaths = []struct {
	name   string
	tenant string
	perKey int
}{
	{name: "plain"},
	{name: "tenants", tenant: "t"},
	{name: "lanes", perKey: 2},
	{name: "lanes with tenants", tenant: "t", perKey: 2},
}

// On every claim path, by Claim and by FinishAndClaim: a key takes Burst
// leases, then one without a token is deferred (Deferred, no attempt
// counted, until its token is due) and the claim leases the next ready
// key in its place; a key without a token that is alone says when its
// token is due.
func TestKeyRateOnEveryClaimPath(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	s := instance(t, schema)
	for _, path := range keyRatePaths {
		for _, viaFinish := range []bool{false, true} {
			name := path.name + "/Claim"
			if viaFinish {
				name = path.name + "/FinishAndClaim"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				q := t.Name()
				p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, PerKey: path.perKey,
					KeyRate: store.KeyRate{Interval: time.Hour}}
				add := store.AddParams{Tenant: path.tenant}
				// next acks l and claims, by FinishAndClaim or by Finish and
				// then Claim.
				next := func(l store.Lease) ([]store.Lease, time.Duration) {
					t.Helper()
					if viaFinish {
						_, ls, next, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
						require.NoError(t, err)
						return ls, next
					}
					_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
					require.NoError(t, err)
					ls, next, err := s.Claim(ctx, q, p)
					require.NoError(t, err)
					return ls, next
				}
				require.NoError(t, s.Add(ctx, q, "a", vals("a1", "a2"), add))
				require.NoError(t, s.Add(ctx, q, "b", vals("b1", "b2"), add))
				ls, _, err := s.Claim(ctx, q, p)
				require.NoError(t, err)
				require.Len(t, ls, 1)
				require.Equal(t, vals("a1"), ls[0].Values)
				ls, _ = next(ls[0])
				require.Len(t, ls, 1)
				require.Equal(t, vals("b1"), ls[0].Values)
				require.NoError(t, s.Add(ctx, q, "c", vals("c1"), add))

				// a, then c, then b are ready; a has no token: the claim
				// defers it and leases c in its place.
				ls, _ = next(ls[0])
				require.Len(t, ls, 1, "the next ready key in the place of the one without a token")
				require.Equal(t, vals("c1"), ls[0].Values)
				info, ok, err := s.Key(ctx, q, "a")
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, store.Deferred, info.State, "a waits for its token")
				require.WithinDuration(t, time.Now().Add(time.Hour), info.Until, 10*time.Second,
					"a's token is due at T - (Burst-1)*Interval: an hour after its lease")

				// b alone is ready, without a token: the claim defers it, and
				// says when the first token is due.
				none, wait := next(ls[0])
				require.Empty(t, none)
				require.InDelta(t, time.Hour.Seconds(), wait.Seconds(), 10, "the wait for the first token")
				info, ok, err = s.Key(ctx, q, "b")
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, store.Deferred, info.State, "b waits for its token")
				st, err := s.Stats(ctx, q)
				require.NoError(t, err)
				require.Zero(t, st.Leased, "a deferral takes no lease")
			})
		}
	}
}

// A key's T outlives its row in keys, which goes when the key empties: a
// key that empties and gets values again before T passed finds T.
func TestKeyRateOutlivesTheKeysRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s := instance(t, schema)
	p := store.ClaimParams{Keys: 1, TTL: ttl, KeyRate: store.KeyRate{Interval: time.Hour}}
	require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)
	var rows int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+pgstore.SchemaOf(s)+".keys WHERE queue = 'q'").Scan(&rows))
	require.Zero(t, rows, "the key's row went with its last value")

	require.NoError(t, s.Add(ctx, "q", "k", vals("2"), store.AddParams{}))
	none, next, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Empty(t, none, "the key found its T: no token for an hour")
	require.InDelta(t, time.Hour.Seconds(), next.Seconds(), 10)
	info, ok, err := s.Key(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.Deferred, info.State)

	// Without a KeyRate, a claim neither reads nor changes T: the key is
	// ready when its deferral ends, as any deferred key.
	none, _, err = s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Empty(t, none)
}
