package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// fakeWhatsApp is the demo's messaging service: each call takes a random
// latency and fails at random at the failure rate, a few groups refuse the
// account, and it records what it saw for the checks.
type fakeWhatsApp struct {
	clk      clock.Clock
	failRate float64
	refuse   map[string]bool // groups that answer "not a member"
	latency  [2]time.Duration

	mu   sync.Mutex
	seen seen
	keys map[string]bool // idempotency keys of the messages delivered
}

// seen is what the service recorded.
type seen struct {
	Attempts  []attempt             // every Send call
	Delivered map[string][]delivery // by account+"/"+group, in order
	Prepared  map[string]int        // media preparations by account
	MediaSent map[string]int        // media messages delivered by account
	Dups      map[string]int        // duplicates suppressed by account
}

type attempt struct {
	Account string
	At      time.Time
}

// delivery is one part a group received.
type delivery struct {
	Part int
	At   time.Time
}

func newFakeWhatsApp(clk clock.Clock, failRate float64, latency [2]time.Duration, refuse []string) *fakeWhatsApp {
	f := &fakeWhatsApp{clk: clk, failRate: failRate, latency: latency, refuse: map[string]bool{}, keys: map[string]bool{},
		seen: seen{Delivered: map[string][]delivery{}, Prepared: map[string]int{}, MediaSent: map[string]int{}, Dups: map[string]int{}}}
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
	f.seen.Prepared[account]++
	return fmt.Sprintf("media/%s/%d", account, f.seen.Prepared[account]), nil
}

// Send delivers m once per idempotency key: a message whose key was
// delivered before is answered as a success and suppressed.
func (f *fakeWhatsApp) Send(ctx context.Context, m message) (bool, error) {
	f.mu.Lock()
	f.seen.Attempts = append(f.seen.Attempts, attempt{Account: m.Account, At: f.clk.Now()})
	f.mu.Unlock()
	fail := rand.Float64() < f.failRate
	if err := f.work(ctx); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case m.Key != "" && f.keys[m.Key]:
		f.seen.Dups[m.Account]++
		return true, nil
	case m.Media != "" && !strings.HasPrefix(m.Media, "media/"+m.Account+"/"):
		return false, &permanentError{"unknown media handle " + m.Media}
	case f.refuse[m.Group]:
		return false, &permanentError{"not a member of " + m.Group}
	case fail:
		return false, errors.New("503 service unavailable")
	}
	f.keys[m.Key] = m.Key != ""
	key := m.Account + "/" + m.Group
	f.seen.Delivered[key] = append(f.seen.Delivered[key], delivery{Part: m.Part, At: f.clk.Now()})
	if m.Media != "" {
		f.seen.MediaSent[m.Account]++
	}
	return false, nil
}

// work takes the latency of one call; one still running at ctx's end or
// deadline fails and delivers nothing, as an abandoned request.
func (f *fakeWhatsApp) work(ctx context.Context) error {
	d := f.latency[0]
	if spread := f.latency[1] - f.latency[0]; spread > 0 {
		d += rand.N(spread)
	}
	if err := sleepCtx(ctx, f.clk, d); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !f.clk.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return ctx.Err()
}

// snapshot returns a copy of what the service has seen so far.
func (f *fakeWhatsApp) snapshot() seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.seen
	s.Attempts, s.Delivered = slices.Clone(s.Attempts), maps.Clone(s.Delivered)
	for k, v := range s.Delivered {
		s.Delivered[k] = slices.Clone(v)
	}
	s.Prepared, s.MediaSent, s.Dups = maps.Clone(s.Prepared), maps.Clone(s.MediaSent), maps.Clone(s.Dups)
	return s
}
