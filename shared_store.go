package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/adaptive"
	istore "github.com/pacerkit/pacer/internal/store"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
)

// sharedStore is the Runner's store over a store.Store engine
// (Config.Store): it encodes keys and values, debounces in the engine,
// claims batches for the idle workers (shared_claim.go) and keeps their
// leases alive (lease_keeper.go).
type sharedStore[K comparable, V any] struct {
	st       store.Store
	fc       store.FinishClaimer // st, if it can finish and claim at once
	name     string
	bound    int // Config.MaxValues, which the engine checks
	codec    Codec[V]
	keys     Codec[K]
	clk      timing.Clock
	log      *slog.Logger
	ttl      time.Duration
	maxBatch int
	retry    Backoff // paces the claims while the engine fails

	debounce, maxWait time.Duration
	adapt             *adaptive.Wait // nil without Adaptive

	// The claim loop: see shared_claim.go.
	idle    atomic.Int32            // workers in Get
	leader  chan struct{}           // holds a token while a worker claims
	handoff chan istore.Lease[K, V] // leases claimed for other idle workers, two per worker at most
	handed  chan struct{}           // holds a token once a lease was handed over (see wait)
	stop    context.Context         // ends at Stop
	halt    context.CancelFunc      // ends stop

	// The Acks that go on in the background (shared_ack.go), and who
	// hears of their end: nil without Config.AckInBackground.
	acking sync.WaitGroup
	acked  func(l istore.Lease[K, V], more bool, err error)

	// The calls about leases, which a worker may stop waiting for
	// (engine_call.go).
	calls engineCalls

	// For Adaptive: the engine's backlog, n values read at at (see quiet).
	backlog struct {
		sync.Mutex
		n  int
		at time.Time
	}
}

var _ istore.Store[string, int] = (*sharedStore[string, int])(nil)

func newSharedStore[K comparable, V any](cfg Config[K, V], adapt *adaptive.Wait) *sharedStore[K, V] {
	stop, halt := context.WithCancel(context.Background())
	fc, _ := cfg.Store.(store.FinishClaimer)
	return &sharedStore[K, V]{
		st:       cfg.Store,
		fc:       fc,
		name:     cfg.Name,
		bound:    cfg.MaxValues,
		codec:    cfg.Codec,
		keys:     cfg.KeyCodec,
		clk:      timing.From(cfg.Clock),
		calls:    engineCalls{clk: timing.From(cfg.Clock)},
		log:      cfg.Logger,
		ttl:      cfg.LeaseTTL,
		maxBatch: cfg.MaxBatch,
		retry:    cfg.Retry,
		debounce: cfg.Debounce,
		maxWait:  cfg.MaxWait,
		adapt:    adapt,
		leader:   make(chan struct{}, 1),
		handoff:  make(chan istore.Lease[K, V], 2*cfg.Workers),
		handed:   make(chan struct{}, 1),
		stop:     stop,
		halt:     halt,
	}
}

// Put implements istore.Store: the values join key's burst in the engine,
// which closes it after the quiet period, whichever instance adds to it.
// It returns ErrFull when the engine's bound refused them.
func (s *sharedStore[K, V]) Put(ctx context.Context, key K, vs ...V) error {
	if s.stop.Err() != nil {
		return istore.ErrStopped
	}
	k, vals, err := s.encode(key, vs...)
	if err != nil {
		return err
	}
	return full(s.st.Add(ctx, s.name, k, vals, s.addParams(ctx)))
}

// addParams returns the AddParams of an Add now: the quiet period, the
// max-wait and the bound.
func (s *sharedStore[K, V]) addParams(ctx context.Context) store.AddParams {
	return store.AddParams{Wait: s.quiet(ctx), MaxWait: s.maxWait, MaxValues: s.bound}
}

// full returns err, or ErrFull when err is the engine's store.ErrFull.
func full(err error) error {
	if errors.Is(err, store.ErrFull) {
		return ErrFull
	}
	return err
}

// encode encodes key and its values for the store, with the Runner's codecs.
func (s *sharedStore[K, V]) encode(key K, vs ...V) (string, [][]byte, error) {
	k, err := s.keys.Encode(key)
	if err != nil {
		return "", nil, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	vals := make([][]byte, len(vs))
	for i, v := range vs {
		if vals[i], err = s.codec.Encode(v); err != nil {
			return "", nil, fmt.Errorf("pacer: Config.Codec cannot encode a value of key %v: %w", key, err)
		}
	}
	return string(k), vals, nil
}

// backlogEvery is how often Adaptive reads the engine's backlog, which
// costs a round trip: at most once a second per Runner.
const backlogEvery = time.Second

// quiet returns the quiet period of a burst that an Add would open now:
// Debounce, or Adaptive's target for the engine's backlog.
func (s *sharedStore[K, V]) quiet(ctx context.Context) time.Duration {
	if s.adapt == nil {
		return s.debounce
	}
	now := s.clk.Now()
	b := &s.backlog
	if b.TryLock() { // one Add refreshes; the others use the last count
		if b.at.IsZero() || now.Sub(b.at) >= backlogEvery {
			if st, err := s.st.Stats(ctx, s.name); err == nil {
				b.n = st.Values - st.HeldValues
			}
			b.at = now
		}
		n := b.n
		b.Unlock()
		return s.adapt.WaitAt(now, n)
	}
	return s.adapt.CurrentAt(now)
}

// finish ends l in the engine as o says. It runs even when ctx ended (a
// Runner stopping defers its batches), and waits for the engine LeaseTTL
// at most (see engineCalls), after which the engine would refuse it
// anyway. It does not end a lease whose deadline passed (errLapsed): the
// lease may be another holder's.
func (s *sharedStore[K, V]) finish(ctx context.Context, l istore.Lease[K, V], o store.Outcome) (bool, error) {
	if l.Lapsed(s.clk) {
		return false, errLapsed
	}
	return callBy(&s.calls, l.Remote.Keeper, ctx, s.clk.Now().Add(s.ttl), func(ctx context.Context) (bool, error) {
		return s.st.Finish(ctx, l.Remote.Lease, o)
	}, nil)
}

// errLapsed is the error of an end of a lease whose deadline passed: it is
// not sent, the lease may be another holder's.
var errLapsed = errors.New("pacer: the lease's deadline passed, its end was not sent")

// finishNext ends l as finish does, after a handler call, by a worker that
// goes back to Get next. With an engine that can, the same round trip
// claims a key for it, handed over like the leader's claims (see
// shared_claim.go): its next Get, or an idle worker's, takes it without a
// Claim. The key is leased meanwhile, while the worker reports the batch
// (OnEvent), as a key the leader claimed is until a worker takes it. A
// Runner that is stopping claims nothing, and gives back at once, with no
// attempt used, what it claimed while it began to stop. A call the worker
// stopped waiting for hands what it claims once it answers, as if in
// time.
func (s *sharedStore[K, V]) finishNext(ctx context.Context, l istore.Lease[K, V], o store.Outcome) (bool, error) {
	if s.fc == nil || ctx.Err() != nil || s.stop.Err() != nil {
		return s.finish(ctx, l, o)
	}
	if l.Lapsed(s.clk) {
		return false, errLapsed
	}
	type ended struct {
		more   bool
		leases []store.Lease
	}
	at := s.clk.Now()
	p := store.ClaimParams{Keys: 1, MaxBatch: s.maxBatch, TTL: s.ttl}
	e, err := callBy(&s.calls, l.Remote.Keeper, ctx, at.Add(s.ttl), func(ctx context.Context) (ended, error) {
		more, leases, _, err := s.fc.FinishAndClaim(ctx, l.Remote.Lease, o, p)
		return ended{more, leases}, err
	}, func(e ended, _ error) { s.handClaimed(ctx, e.leases, at) })
	s.handClaimed(ctx, e.leases, at)
	return e.more, err
}

// handClaimed hands over the leases a call sent at at claimed, or gives
// them back if the Runner is stopping.
func (s *sharedStore[K, V]) handClaimed(ctx context.Context, leases []store.Lease, at time.Time) {
	for _, nl := range leases {
		if s.stop.Err() != nil || ctx.Err() != nil {
			// A Get that saw the stop may have given back the handoff
			// already: this lease must not wait there for a worker.
			s.deferNow(ctx, s.decode(nl, at))
			continue
		}
		s.hand(ctx, s.decode(nl, at))
	}
}

// Drop implements istore.Store: the engine keeps the batch as it was
// stored, with why, as a dead letter.
func (s *sharedStore[K, V]) Drop(ctx context.Context, l istore.Lease[K, V], why error) (bool, error) {
	return s.finishNext(ctx, l, store.Outcome{Kind: store.Drop, Err: why.Error()})
}

// Retry implements istore.Store.
func (s *sharedStore[K, V]) Retry(ctx context.Context, l istore.Lease[K, V], after time.Duration) error {
	_, err := s.finishNext(ctx, l, store.Outcome{Kind: store.Retry, After: after})
	return err
}

// Defer implements istore.Store. It claims nothing: a batch is deferred
// when it could not run, mostly because the Runner is stopping.
func (s *sharedStore[K, V]) Defer(ctx context.Context, l istore.Lease[K, V], after time.Duration) error {
	_, err := s.finish(ctx, l, store.Outcome{Kind: store.Defer, After: after})
	return err
}

// Hold implements istore.Store. It claims nothing: holding is rare, and the
// worker runs OnEvent's EventHeld before it is back in Get.
func (s *sharedStore[K, V]) Hold(ctx context.Context, l istore.Lease[K, V]) error {
	_, err := s.finish(ctx, l, store.Outcome{Kind: store.Hold})
	return err
}

// Release implements istore.Store.
func (s *sharedStore[K, V]) Release(ctx context.Context, key K) (bool, error) {
	k, err := s.keys.Encode(key)
	if err != nil {
		return false, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	return s.st.Release(ctx, s.name, string(k))
}

// Gauges implements istore.Store with the engine's counts, which cover
// every Runner of the queue. The engine does not count the values out on
// a lease apart: Queued counts every value stored.
func (s *sharedStore[K, V]) Gauges(ctx context.Context) (istore.Gauges, error) {
	st, err := s.st.Stats(ctx, s.name)
	if err != nil {
		return istore.Gauges{}, err
	}
	return istore.Gauges{
		Values:   st.Values,
		Queued:   st.Values,
		InFlight: st.Leased,
		Pending:  st.Pending,
		Held:     st.Held,
		Retrying: st.Retrying,
		Blocked:  st.Behind,
		Dead:     st.Dead,
	}, nil
}

// Active implements istore.Store: a stopping Runner leaves what is stored
// to the engine, so nothing holds a Shutdown back but the running batches.
func (s *sharedStore[K, V]) Active() int { return 0 }

// Behind implements istore.Store: the engine does not tell it.
func (s *sharedStore[K, V]) Behind(K) int { return 0 }

// Stop implements istore.Store: the Runner claims no more batches.
func (s *sharedStore[K, V]) Stop() { s.halt() }

// Close implements istore.Store: the values stay in the engine, which the
// Runner does not own. It waits for the Acks in the background and for the
// calls the workers stopped waiting for (which hand what they claimed
// before they end), and gives back the leases that nobody took, so that
// they do not lapse, which would count an attempt.
func (s *sharedStore[K, V]) Close(func(K, []V)) {
	s.halt()
	s.acking.Wait()
	s.calls.wait()
	s.giveBack(context.Background())
	s.calls.wait() // the give-backs the engine did not answer in time
}

// warn logs a failed call to the engine.
func (s *sharedStore[K, V]) warn(msg string, attrs ...slog.Attr) {
	ctx := context.Background()
	if s.log.Enabled(ctx, slog.LevelWarn) {
		s.log.LogAttrs(ctx, slog.LevelWarn, msg, append([]slog.Attr{slog.String("queue", s.name)}, attrs...)...)
	}
}
