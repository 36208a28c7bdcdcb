package storetest

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// runKeyRateProcesses is the "KeyRate" scenario of RunProcesses, for an
// engine that implements store.KeyRateClaimer: the load and the checks of
// runKeyLimitProcesses, where each process's Runner has Config.KeyRate
// (keyRate a second, burst keyBurst) in place of a KeyLimit, so that the
// engine takes each key's token in the claims that lease it. A call's
// token was taken between the send of the claim that leased its batch
// and the call's start: each process notes when it sent each claim, and
// the handler finds its lease's by its fence.
func runKeyRateProcesses(t *testing.T, p Processes) {
	if kr, ok := p.Store.(store.KeyRateClaimer); !ok || !kr.ClaimsKeyRate() {
		t.Skip("the engine does not implement store.KeyRateClaimer")
	}
	runKeyRatedLoad(t, p, childKeyRate, strconv.Itoa(keyBurst))
}

// childKeyRated is a process of runKeyRateProcesses: a pacer Runner on
// queue q, with 2 workers, MaxBatch 1 and Config.KeyRate, over s, whose
// handler prints "call KEY VALUE ASKED STARTED" as it starts, ASKED being
// when the claim that leased its batch was sent. It runs from "go" on
// standard input until standard input closes; then it shuts down and
// prints how many values it handled, as "handled N".
func childKeyRated(t *testing.T, s store.Store, q string, burst int) {
	say := printer()
	logged := newClaimLog(t, s)
	var handled atomic.Int64
	rate := store.KeyRate{Interval: time.Duration(float64(time.Second) / keyRate), Burst: burst}
	r, err := pacer.New(pacer.Config[string, string]{Store: logged, Name: q, Workers: 2, MaxBatch: 1, KeyRate: rate},
		func(ctx context.Context, key string, batch []string) error {
			started := time.Now().UnixNano()
			fence, _ := pacer.Fence(ctx)
			say("call %s %s %d %d", key, strings.Join(batch, ","), logged.sent(key, fence), started)
			handled.Add(int64(len(batch)))
			return nil
		})
	require.NoError(t, err)
	runUntilClosed(t, r, say)
	say("handled %d", handled.Load())
}

// claimLog is a store as a process's Runner uses it: it notes, on the
// host's clock, when each claim that leased a batch was sent, by the
// lease's key and fence.
type claimLog struct {
	store.Store
	fc store.FinishClaimer

	mu     sync.Mutex
	sentAt map[leaseOf]int64 // Unix nanoseconds
}

// leaseOf names a lease of a key.
type leaseOf struct {
	key   string
	fence uint64
}

// newClaimLog returns the claimLog of s, which must keep a rate per key
// and finish and claim in one call.
func newClaimLog(t *testing.T, s store.Store) *claimLog {
	fc, ok := s.(store.FinishClaimer)
	require.True(t, ok, "the engine of the KeyRate scenario implements store.FinishClaimer")
	return &claimLog{Store: s, fc: fc, sentAt: map[leaseOf]int64{}}
}

// ClaimsKeyRate implements store.KeyRateClaimer, as s does.
func (c *claimLog) ClaimsKeyRate() bool { return true }

// Claim is s's, noting when it was sent.
func (c *claimLog) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	sent := time.Now().UnixNano()
	ls, next, err := c.Store.Claim(ctx, queue, p)
	c.note(sent, ls)
	return ls, next, err
}

// FinishAndClaim is s's, noting when it was sent.
func (c *claimLog) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	sent := time.Now().UnixNano()
	more, ls, next, err := c.fc.FinishAndClaim(ctx, l, o, p)
	c.note(sent, ls)
	return more, ls, next, err
}

func (c *claimLog) note(sent int64, ls []store.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range ls {
		c.sentAt[leaseOf{l.Key, l.Fence}] = sent
	}
}

// sent returns when the claim that leased key with fence was sent, and
// forgets it; 0 if no claim of this process did.
func (c *claimLog) sent(key string, fence uint64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := leaseOf{key, fence}
	at := c.sentAt[id]
	delete(c.sentAt, id)
	return at
}
