package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// fakeWhatsApp is the demo's in-process messaging service. Each attempt
// takes a random latency and fails at random with the configured rate; a
// few groups refuse the account for good. It records every attempt, which
// parts each group received in which order, and each media preparation,
// so the demo can check the fan-out against what the service saw.
type fakeWhatsApp struct {
	clk      clock.Clock
	failRate float64
	refuse   map[string]bool // groups that answer "not a member"
	latency  [2]time.Duration

	mu        sync.Mutex
	rnd       *rand.Rand
	attempts  []attempt
	delivered map[string][]delivery // by account+"/"+group
	prepared  map[string]int        // media preparations by account
	mediaSent map[string]int        // media messages delivered by account
	handles   map[string]string     // handle -> account
	keys      map[string]bool       // idempotency keys of the messages delivered
	dups      map[string]int        // duplicates suppressed, by account
}

// attempt is one Send call as the service saw it.
type attempt struct {
	Account string
	At      time.Time
}

// delivery is one part a group received.
type delivery struct {
	Part int
	At   time.Time
}

func newFakeWhatsApp(clk clock.Clock, failRate float64, latency [2]time.Duration, refuse []string, seed uint64) *fakeWhatsApp {
	f := &fakeWhatsApp{
		clk: clk, failRate: failRate, latency: latency, refuse: map[string]bool{},
		rnd:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		delivered: map[string][]delivery{}, prepared: map[string]int{}, mediaSent: map[string]int{},
		handles: map[string]string{}, keys: map[string]bool{}, dups: map[string]int{},
	}
	for _, g := range refuse {
		f.refuse[g] = true
	}
	return f
}

func (f *fakeWhatsApp) PrepareMedia(ctx context.Context, account, src string) (string, error) {
	if err := f.work(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prepared[account]++
	h := fmt.Sprintf("media-%s-%d", account, f.prepared[account])
	f.handles[h] = account
	return h, nil
}

// Send delivers m once per idempotency key: a message whose key was
// delivered before is answered as a success and suppressed.
func (f *fakeWhatsApp) Send(ctx context.Context, m message) (bool, error) {
	f.mu.Lock()
	f.attempts = append(f.attempts, attempt{Account: m.Account, At: f.clk.Now()})
	fail := f.rnd.Float64() < f.failRate
	f.mu.Unlock()
	if err := f.work(ctx); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case m.Key != "" && f.keys[m.Key]:
		f.dups[m.Account]++
		return true, nil
	case m.Media != "" && f.handles[m.Media] != m.Account:
		return false, &permanentError{"unknown media handle " + m.Media}
	case f.refuse[m.Group]:
		return false, &permanentError{"not a member of " + m.Group}
	case fail:
		return false, errors.New("503 service unavailable")
	}
	if m.Key != "" {
		f.keys[m.Key] = true
	}
	key := m.Account + "/" + m.Group
	f.delivered[key] = append(f.delivered[key], delivery{Part: m.Part, At: f.clk.Now()})
	if m.Media != "" {
		f.mediaSent[m.Account]++
	}
	return false, nil
}

// work takes the latency of one call. A call still running when ctx ends,
// or at ctx's deadline, fails and delivers nothing, as a request that the
// client abandoned.
func (f *fakeWhatsApp) work(ctx context.Context) error {
	f.mu.Lock()
	d := f.latency[0]
	if spread := f.latency[1] - f.latency[0]; spread > 0 {
		d += time.Duration(f.rnd.Int64N(int64(spread)))
	}
	f.mu.Unlock()
	if err := sleepCtx(ctx, f.clk, d); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !f.clk.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return ctx.Err()
}

// seen is a copy of what the service recorded.
type seen struct {
	Attempts  []attempt
	Delivered map[string][]delivery // by account+"/"+group
	Prepared  map[string]int        // media preparations by account
	MediaSent map[string]int        // media messages delivered by account
	Dups      map[string]int        // duplicates suppressed by account
}

func (f *fakeWhatsApp) snapshot() seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := make(map[string][]delivery, len(f.delivered))
	for k, v := range f.delivered {
		d[k] = slices.Clone(v)
	}
	return seen{slices.Clone(f.attempts), d, maps.Clone(f.prepared), maps.Clone(f.mediaSent), maps.Clone(f.dups)}
}
