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
	"github.com/pacerkit/pacer/internal/engine"
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
	handoff chan engine.Lease[K, V] // leases claimed for other idle workers, two per worker at most
	handed  chan struct{}           // holds a token once a lease was handed over (see wait)
	stop    context.Context         // ends at Stop
	halt    context.CancelFunc      // ends stop

	// The Acks that go on in the background (shared_ack.go), and who
	// hears of their end: nil without Config.AckInBackground.
	acking sync.WaitGroup
	acked  func(l engine.Lease[K, V], more bool, err error)

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

var _ engine.Engine[string, int] = (*sharedStore[string, int])(nil)

func newSharedStore[K comparable, V any](cfg Config[K, V], adapt *adaptive.Wait, acked func(engine.Lease[K, V], bool, error)) *sharedStore[K, V] {
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
		handoff:  make(chan engine.Lease[K, V], 2*cfg.Workers),
		handed:   make(chan struct{}, 1),
		stop:     stop,
		halt:     halt,
		acked:    acked,
	}
}

// Put implements engine.Engine: v joins key's burst in the engine, which
// closes it after the quiet period, whichever instance adds to it.
func (s *sharedStore[K, V]) Put(ctx context.Context, key K, v V) error {
	if s.stop.Err() != nil {
		return engine.ErrStopped
	}
	k, vals, err := s.encode(key, v)
	if err != nil {
		return err
	}
	return s.st.Add(ctx, s.name, k, vals, s.addParams(ctx))
}

// PutTx implements engine.Engine with the engine's store.TxAdder.
func (s *sharedStore[K, V]) PutTx(ctx context.Context, tx any, key K, v V) error {
	ta, ok := s.st.(store.TxAdder)
	if !ok {
		return engine.ErrNoTx
	}
	if s.stop.Err() != nil {
		return engine.ErrStopped
	}
	k, vals, err := s.encode(key, v)
	if err != nil {
		return err
	}
	return ta.AddTx(ctx, tx, s.name, k, vals, s.addParams(ctx))
}

// addParams returns the AddParams of an Add now: the quiet period, the
// max-wait and the bound.
func (s *sharedStore[K, V]) addParams(ctx context.Context) store.AddParams {
	return store.AddParams{Wait: s.quiet(ctx), MaxWait: s.maxWait, MaxValues: s.bound}
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
func (s *sharedStore[K, V]) finish(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
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
func (s *sharedStore[K, V]) finishNext(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
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

// Release implements engine.Engine.
func (s *sharedStore[K, V]) Release(ctx context.Context, key K) (bool, error) {
	k, err := s.keys.Encode(key)
	if err != nil {
		return false, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	return s.st.Release(ctx, s.name, string(k))
}

// Gauges implements engine.Engine with the engine's counts, which cover
// every Runner of the queue. The engine does not count the values out on
// a lease apart: Queued counts every value stored.
func (s *sharedStore[K, V]) Gauges(ctx context.Context) (engine.Gauges, error) {
	st, err := s.st.Stats(ctx, s.name)
	if err != nil {
		return engine.Gauges{}, err
	}
	return engine.Gauges{
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

// Behind implements engine.Engine: the store contract counts the values
// behind retried batches per queue only.
func (s *sharedStore[K, V]) Behind(K) int { return 0 }

// Drain implements engine.Engine: the Runner claims no more batches, and
// leaves what is stored to the engine, so nothing holds a Shutdown back
// but the running batches.
func (s *sharedStore[K, V]) Drain() { s.halt() }

// Close implements engine.Engine: the values stay in the engine, which the
// Runner does not own. It waits for the Acks in the background and for the
// calls the workers stopped waiting for (which hand what they claimed
// before they end), and gives back the leases that nobody took, so that
// they do not lapse, which would count an attempt.
func (s *sharedStore[K, V]) Close() {
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
