// Package shared is the engine of a pacer Runner over a store.Store that
// Runners of several processes share (pacer.Config.Store). Its Engine
// implements engine.Engine, and guarantees besides:
//
//   - A lease is renewed every TTL/3 while its batch runs. The handler's
//     ctx ends with engine.ErrLeaseLost at the lease's deadline on the
//     Runner's own clock, before another process can lease the key (see
//     engine.Deadline), and a lease whose deadline passed is neither
//     handled nor finished (keeper.go).
//   - A call about a lease is given up at a deadline, whatever the store's
//     client does (call.go).
//   - The workers of a Runner claim in one round trip for all of them,
//     and at most one of them waits in the store (claim.go).
//   - What is stored stays in the store when the Engine closes.
//
// Keys and values are encoded with the Runner's codecs, each value framed
// with the bytes its Put carries when the Runner carries (codec.go). What
// the Runner hears of later, the end of an Ack that went on in the
// background (ack.go), goes to a callback of Config.
package shared

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/internal/adaptive"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
)

// Config configures an Engine. Store, Queue, Codec and KeyCodec are
// required, and LeaseTTL must be positive.
type Config[K comparable, V any] struct {
	// Store is the store, and Queue the Runner's queue in it.
	Store store.Store
	Queue string
	// Codec and KeyCodec encode the values and the keys.
	Codec    Codec[V]
	KeyCodec Codec[K]
	// Carry, when set, is called by Put and PutTx with their ctx, and
	// the bytes it returns, at most carrier.MaxCarried, are stored with
	// the value (see package carrier) and handed out with it in
	// engine.Lease.Carried. nil stores the Codec's bytes alone.
	Carry func(context.Context) []byte
	// Workers is the number of the Runner's workers, which Get serves.
	Workers int
	// MaxBatch is the most values one lease holds; 0 means all of the
	// key's ready values.
	MaxBatch int
	// PerKey is the most leases of one key at once
	// (store.ClaimParams.PerKey); the store must honour it.
	PerKey int
	// KeyRate is the rate per key that the store keeps with every claim
	// (store.ClaimParams.KeyRate); the store must honour it.
	KeyRate store.KeyRate
	// MaxValues bounds the values the queue stores, for every process
	// together (store.AddParams.MaxValues); 0 means no bound.
	MaxValues int
	// Debounce and MaxWait are the burst's quiet period and bound, passed
	// to the store with each Add; Adaptive, when set, chooses the quiet
	// period from the store's backlog instead of Debounce.
	Debounce, MaxWait time.Duration
	Adaptive          *adaptive.Wait
	// LeaseTTL is how long a lease lasts without renewal.
	LeaseTTL time.Duration
	// Holder names the Runner's instance in every claim
	// (store.ClaimParams.Holder), for an operator; it may be "".
	Holder string
	// Pause is how long the claim loop waits after failures calls to the
	// store failed in a row; it is capped at LeaseTTL. nil waits LeaseTTL.
	Pause func(failures int) time.Duration
	// Clock is the Runner's time source, for the leases' deadlines and
	// renewals; nil is the real clock.
	Clock clock.Clock
	// Logger receives the warnings about failed calls; nil discards them.
	Logger *slog.Logger

	// AckInBackground lets a quick batch's Ack go on in the background
	// when Store implements store.FinishClaimer (see ack.go); Acked,
	// which it requires, then hears of the end of each such Ack, on a
	// goroutine of the Engine.
	AckInBackground bool
	Acked           func(l engine.Lease[K, V], more bool, err error)

	// Tenant, when set, gives each key's tenant and weight, passed with
	// each Add (store.AddParams.Tenant and Weight).
	Tenant func(K) (string, int)
}

// Engine is the engine over a store.Store. Make one with New; Close it.
type Engine[K comparable, V any] struct {
	st       store.Store
	fc       store.FinishClaimer // st, if it can finish and claim at once
	name     string
	bound    int // Config.MaxValues, which the store checks
	codec    Codec[V]
	keys     Codec[K]
	carry    func(context.Context) []byte // Config.Carry
	clk      timing.Clock
	log      *slog.Logger
	ttl      time.Duration
	maxBatch int
	perKey   int                              // Config.PerKey
	keyRate  store.KeyRate                    // Config.KeyRate
	holder   string                           // Config.Holder
	pause    func(failures int) time.Duration // paces the claims while the store fails

	debounce, maxWait time.Duration
	tenant            func(K) (string, int) // Config.Tenant
	adapt             *adaptive.Wait        // nil without Adaptive

	// The claim loop: see claim.go.
	idle    atomic.Int32            // workers in Get
	leader  chan struct{}           // holds a token while a worker claims
	handoff chan engine.Lease[K, V] // leases claimed for other idle workers, two per worker at most, undecoded
	handed  chan struct{}           // holds a token once a lease was handed over (see wait)
	stop    context.Context         // ends at Drain
	halt    context.CancelFunc      // ends stop

	// The Acks that go on in the background (ack.go), and who hears of
	// their end: nil without Config.AckInBackground.
	acking sync.WaitGroup
	acked  func(l engine.Lease[K, V], more bool, err error)

	// The calls about leases, which a worker may stop waiting for
	// (call.go).
	calls *engineCalls

	// For Adaptive: the store's backlog, n values read at at (see quiet).
	backlog struct {
		sync.Mutex
		n  int
		at time.Time
	}
}

var _ engine.Engine[string, int] = (*Engine[string, int])(nil)

// New returns an Engine configured by cfg.
func New[K comparable, V any](cfg Config[K, V]) *Engine[K, V] {
	stop, halt := context.WithCancel(context.Background())
	fc, _ := cfg.Store.(store.FinishClaimer)
	s := &Engine[K, V]{
		st:       cfg.Store,
		fc:       fc,
		name:     cfg.Queue,
		bound:    cfg.MaxValues,
		codec:    cfg.Codec,
		keys:     cfg.KeyCodec,
		carry:    cfg.Carry,
		clk:      timing.From(cfg.Clock),
		calls:    newEngineCalls(timing.From(cfg.Clock), 2*max(cfg.Workers, 1)),
		log:      cfg.Logger,
		ttl:      cfg.LeaseTTL,
		maxBatch: cfg.MaxBatch,
		perKey:   cfg.PerKey,
		keyRate:  cfg.KeyRate,
		holder:   cfg.Holder,
		pause:    cfg.Pause,
		debounce: cfg.Debounce,
		maxWait:  cfg.MaxWait,
		adapt:    cfg.Adaptive,
		tenant:   cfg.Tenant,
		leader:   make(chan struct{}, 1),
		handoff:  make(chan engine.Lease[K, V], 2*max(cfg.Workers, 1)),
		handed:   make(chan struct{}, 1),
		stop:     stop,
		halt:     halt,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.pause == nil {
		s.pause = func(int) time.Duration { return cfg.LeaseTTL }
	}
	if cfg.AckInBackground {
		s.acked = cfg.Acked
	}
	return s
}

// Put implements engine.Engine: v joins key's burst in the store, which
// closes it after the quiet period, whichever instance adds to it.
func (s *Engine[K, V]) Put(ctx context.Context, key K, v V) error {
	if s.stop.Err() != nil {
		return engine.ErrClosed
	}
	k, vals, err := s.encode(ctx, key, v)
	if err != nil {
		return err
	}
	return s.st.Add(ctx, s.name, k, vals, s.addParams(ctx, key))
}

// PutTx implements engine.Engine when the store implements store.TxAdder;
// otherwise it returns engine.ErrNoTx.
func (s *Engine[K, V]) PutTx(ctx context.Context, tx any, key K, v V) error {
	ta, ok := s.st.(store.TxAdder)
	if !ok {
		return engine.ErrNoTx
	}
	if s.stop.Err() != nil {
		return engine.ErrClosed
	}
	k, vals, err := s.encode(ctx, key, v)
	if err != nil {
		return err
	}
	return ta.AddTx(ctx, tx, s.name, k, vals, s.addParams(ctx, key))
}

// PutAfter implements engine.Engine: v is stored now, due d after the
// store's clock reads the Add.
func (s *Engine[K, V]) PutAfter(ctx context.Context, key K, v V, d time.Duration) error {
	if s.debounce > 0 || s.adapt != nil {
		return engine.ErrDelayDebounced
	}
	if s.stop.Err() != nil {
		return engine.ErrClosed
	}
	k, vals, err := s.encode(ctx, key, v)
	if err != nil {
		return err
	}
	return s.st.Add(ctx, s.name, k, vals, store.AddParams{Delay: d, MaxValues: s.bound})
}

// PutTxAfter implements engine.Engine as PutTx does, with PutAfter's
// delay.
func (s *Engine[K, V]) PutTxAfter(ctx context.Context, tx any, key K, v V, d time.Duration) error {
	ta, ok := s.st.(store.TxAdder)
	if !ok {
		return engine.ErrNoTx
	}
	if s.debounce > 0 || s.adapt != nil {
		return engine.ErrDelayDebounced
	}
	if s.stop.Err() != nil {
		return engine.ErrClosed
	}
	k, vals, err := s.encode(ctx, key, v)
	if err != nil {
		return err
	}
	return ta.AddTx(ctx, tx, s.name, k, vals, store.AddParams{Delay: d, MaxValues: s.bound})
}

// addParams returns the AddParams of an Add now: the quiet period, the
// max-wait, the bound, and key's tenant and weight.
func (s *Engine[K, V]) addParams(ctx context.Context, key K) store.AddParams {
	p := store.AddParams{Wait: s.quiet(ctx), MaxWait: s.maxWait, MaxValues: s.bound}
	if s.tenant != nil {
		p.Tenant, p.Weight = s.tenant(key)
	}
	return p
}

// backlogEvery is how often Adaptive reads the store's backlog, which
// costs a round trip: at most once a second per Runner.
const backlogEvery = time.Second

// quiet returns the quiet period of a burst that an Add would open now:
// Debounce, or Adaptive's target for the store's backlog.
func (s *Engine[K, V]) quiet(ctx context.Context) time.Duration {
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

// Release implements engine.Engine.
func (s *Engine[K, V]) Release(ctx context.Context, key K) (bool, error) {
	k, err := s.keys.Encode(key)
	if err != nil {
		return false, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	return s.st.Release(ctx, s.name, string(k))
}

// Gauges implements engine.Engine with the store's counts, which cover
// every Runner of the queue. The store does not count the values out on
// a lease apart: Queued counts every value stored.
func (s *Engine[K, V]) Gauges(ctx context.Context) (engine.Gauges, error) {
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
func (s *Engine[K, V]) Behind(K) int { return 0 }

// Drain implements engine.Engine: the Runner claims no more batches and
// leaves what is stored where it is, so nothing holds a Shutdown back but
// the running batches.
func (s *Engine[K, V]) Drain() { s.halt() }

// Close implements engine.Engine: the values stay in the store, which the
// Runner does not own. It waits for the Acks in the background and for the
// calls the workers stopped waiting for (which hand what they claimed
// before they end), and gives back the leases that nobody took, so that
// they do not lapse, which would count an attempt.
func (s *Engine[K, V]) Close() {
	s.halt()
	s.acking.Wait()
	s.calls.wait()
	s.giveBack(context.Background())
	s.calls.wait() // the give-backs the store did not answer in time
	s.calls.close()
}

// warn logs a failed call to the store.
func (s *Engine[K, V]) warn(msg string, attrs ...slog.Attr) {
	ctx := context.Background()
	if s.log.Enabled(ctx, slog.LevelWarn) {
		s.log.LogAttrs(ctx, slog.LevelWarn, msg, append([]slog.Attr{slog.String("queue", s.name)}, attrs...)...)
	}
}
