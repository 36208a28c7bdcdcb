package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/fifo"
	"github.com/pacerkit/pacer/internal/adaptive"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/local"
	"github.com/pacerkit/pacer/internal/shared"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

// A Handler processes a batch of values of one key. The Runner never calls
// it twice at once for one key.
//
// Its error decides what happens to the batch:
//   - nil acknowledges it;
//   - [Permanent](err) drops it;
//   - [RetryAfter](err, d) retries it after d, delaying this key only;
//   - [PauseAll](err, d), or an error wrapping a [*ratelimit.LimitError]
//     (see [ratelimit.CheckResponse]), retries it after d and pauses
//     [Config.Limiter] for every key;
//   - any other error retries it after the backoff of [Config.Retry].
//
// ctx ends, with the cause given by [context.Cause], when:
//   - [Config.Window], or the key's [Config.KeyWindow], closes:
//     [window.ErrOutside];
//   - Run's ctx ends: its cause; the batch goes back to its key without
//     using an attempt;
//   - a [Runner.Shutdown]'s ctx expires: [ErrClosed] (a graceful Shutdown
//     lets the handler run);
//   - with [Config.Store], the Runner lost the batch's lease:
//     [ErrLeaseLost]; another instance runs the batch again.
//
// [Attempt](ctx) tells which attempt this is, and [Fence](ctx) the lease's
// fencing token. batch belongs to the Runner, which hands the same values
// again on a retry and to [Config.OnDrop]: the handler must not modify
// them (clone batch first to sort or filter it).
type Handler[K comparable, V any] func(ctx context.Context, key K, batch []V) error

// A Runner paces work per key: it debounces the values added for a key,
// queues the key's bursts in order, and runs the [Handler] on batches of
// them with [Config.Workers] workers, under an optional [Config.Limiter]
// and [Config.Window] and a limit and window per key ([Config.KeyLimit],
// [Config.KeyWindow]), retrying failures with the backoff of
// [Config.Retry].
//
// Its state lives in the process, or, with [Config.Store], in a
// [store.Store] engine that Runners of several processes share under one
// [Config.Name]: the guarantees below then hold across all of them, and
// delivery is at least once (a batch whose holder died or lost its lease
// runs again).
//
// Guarantees:
//   - Exclusivity: at most one batch per key is being handled at any time.
//   - Fairness: keys are served first come, first served by the time they
//     became ready (their burst was queued, their previous batch ended with
//     values behind it, their retry delay passed, or they were released). A
//     key that just ran, or failed, goes to the tail behind the keys that
//     were waiting, so no key is starved.
//   - Order: a key's values reach the handler in Add order. With
//     [Config.MaxBatch] 0 (coalesce) each call gets everything waiting for
//     the key; values that arrive during a call run in a later call. With
//     MaxBatch 1 (strict) a failing value is retried until it succeeds, is
//     dropped or is held before any later value of its key runs; other
//     keys go on meanwhile.
//   - No loss: every value accepted by Add is either handled successfully,
//     handed to [Config.OnDrop] (with the reason), or still held by the
//     Runner or its Store. Ending Run's ctx drops nothing.
//   - No loss at Shutdown, in the process: a graceful Shutdown finishes
//     everything except held keys; held keys, and what a Shutdown cut
//     short by its ctx could not finish, go to OnDrop with [ErrClosed], and
//     that Shutdown returns an error that says how many values it dropped.
//   - No loss at Shutdown, with a Store: Shutdown leaves everything stored
//     to the next Runner, and a batch OnDrop gets is also kept in the
//     engine as a dead letter, which [Runner.DeadLetters] lists,
//     [Runner.Redrive] puts back at its key's tail and [Runner.Purge]
//     removes (see [ErrNoDeadLetters] for the stores that keep none).
//   - A panic in the handler is recovered and treated as an error
//     ([*PanicError]); the worker lives on. A panic in [Config.OnEvent] or
//     OnDrop is not recovered: like a panic in the function of
//     [time.AfterFunc], it crashes the program.
//
// Lifecycle:
//   - [New] starts the debouncer. [Runner.Add] may be called at once: it
//     buffers values (or stores them) until [Runner.Run] starts the
//     workers.
//   - Run blocks until its ctx ends or Shutdown has stopped the Runner.
//     When its ctx ends, the Runner keeps everything and still accepts
//     values, and Run may be called again.
//   - [Runner.Shutdown] drains the Runner (with a Store: lets the running
//     batches finish) and waits until every goroutine of the Runner has
//     returned. A program must call it before it exits. It may be called
//     at any time, before Run or after Run returned (it then runs the
//     workers itself), and more than once.
//   - Add returns [ErrClosed] once Shutdown began.
//
// The usual pattern is to run with a ctx that a signal cancels, then to
// call Shutdown with a deadline:
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	go r.Run(ctx)
//	<-ctx.Done()
//	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
//	defer cancel()
//	if err := r.Shutdown(shutdownCtx); err != nil {
//		log.Print(err) // how many values went to OnDrop unhandled
//	}
//
// A Runner is safe for concurrent use. Its overhead per value in the
// process, measured: BENCHMARKS.md at the repository root.
type Runner[K comparable, V any] struct {
	cfg    Config[K, V]
	handle Handler[K, V]
	clk    timing.Clock
	log    *slog.Logger
	engine engine.Engine[K, V]
	pauser ratelimit.Pauser
	// keyRate is Config.KeyRate's buckets in the process, without a
	// Store; nil otherwise.
	keyRate *ratelimit.Keyed[K]
	window  *window.Schedule
	adapt   *adaptive.Wait
	c       counters

	closed atomic.Bool  // a Shutdown began: Add refuses values; set under mu
	lost   atomic.Int64 // values a stopping Runner handed to OnDrop

	// For Explain: the end of the last pause of the Limiter that pauseAll
	// made (Unix nanoseconds on the Runner's clock, 0 for none), and how
	// many batches wait for the Limiter now.
	pausedUntil  atomic.Int64
	limiterWaits atomic.Int32
	decode       decoder[K, V] // the stored forms of keys and values, for View

	mu       sync.Mutex
	crew     *crew         // the running workers, nil when none run
	gaveUp   bool          // a Shutdown's ctx expired: workers start cancelled
	done     chan struct{} // closed when the first Shutdown returns
	shutOnce sync.Once
}

// New returns a Runner that calls h, configured by cfg. It returns an error
// naming the field when cfg is invalid, and panics if h is nil.
func New[K comparable, V any](cfg Config[K, V], h Handler[K, V]) (*Runner[K, V], error) {
	if h == nil {
		panic("pacer: New with a nil Handler")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &Runner[K, V]{
		cfg:    cfg,
		handle: h,
		clk:    timing.From(cfg.Clock),
		log:    cfg.Logger,
		done:   make(chan struct{}),
	}
	r.pauser, _ = cfg.Limiter.(ratelimit.Pauser)
	if cfg.KeyRate.On() && cfg.Store == nil {
		r.keyRate = cfg.keyRateBuckets()
	}
	if cfg.Window != nil {
		w := cfg.Window.WithClock(cfg.Clock)
		r.window = &w
	}
	if cfg.Adaptive.Max > 0 {
		r.adapt = cfg.Adaptive.wait(cfg.Debounce)
	}
	e, err := r.newEngine()
	if err != nil {
		return nil, fmt.Errorf("pacer: %w", err)
	}
	r.engine = e
	r.decode = r.newDecoder()
	return r, nil
}

// newEngine returns the engine that keeps r's values: over Config.Store,
// which debounces, since the values of a key come from every instance; or
// in the process. Each tells r what r must hear of through the callbacks
// of its config.
func (r *Runner[K, V]) newEngine() (engine.Engine[K, V], error) {
	cfg := r.cfg
	if cfg.Store != nil {
		return shared.New(shared.Config[K, V]{
			Store:           cfg.Store,
			Queue:           cfg.Name,
			Codec:           cfg.Codec,
			KeyCodec:        cfg.KeyCodec,
			Carry:           cfg.Carry,
			Workers:         cfg.Workers,
			MaxBatch:        cfg.MaxBatch,
			PerKey:          cfg.PerKey,
			KeyRate:         cfg.KeyRate,
			MaxValues:       cfg.MaxValues,
			Debounce:        cfg.Debounce,
			MaxWait:         cfg.MaxWait,
			Adaptive:        r.adapt,
			LeaseTTL:        cfg.LeaseTTL,
			Holder:          cfg.Instance,
			Pause:           cfg.Retry.Delay,
			Clock:           cfg.Clock,
			Logger:          cfg.Logger,
			AckInBackground: cfg.AckInBackground,
			Acked:           r.acked,
			Tenant:          cfg.tenantOf(),
		}), nil
	}
	lc := local.Config[K, V]{
		MaxBatch:  cfg.MaxBatch,
		PerKey:    cfg.PerKey,
		MaxValues: cfg.MaxValues,
		Debounce:  cfg.Debounce,
		MaxWait:   cfg.MaxWait,
		Adaptive:  r.adapt,
		Clock:     cfg.Clock,
		Ready:     r.ready,
		Left:      r.lose,
	}
	if cfg.Tenant != nil {
		lc.Tenants = fifo.Tenants[K]{Of: cfg.Tenant, Weight: cfg.tenantWeight}
	}
	if cfg.DropPendingOnShutdown {
		lc.DropPending = r.dropPending
	}
	if cfg.Carry != nil {
		// An engine of values and their bytes, so that without Carry a
		// value costs no more.
		e, err := local.NewCarrying(lc, cfg.Carry)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	e, err := local.New(lc)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Add gives v to key. With Debounce, v joins the key's burst; otherwise it
// is queued at once. Add never blocks on the handler. It returns ctx.Err()
// if ctx is done, ErrClosed once Shutdown began, and ErrFull when the
// Runner holds Config.MaxValues values (with a Config.Store: when the
// queue stores that many, for every instance); in all these cases v was
// not accepted.
//
// With a Config.Store, Add encodes key and v and stores v, in one call to
// the engine that ctx bounds; the burst debounces in the engine, where the
// values of the key added by other instances join it. Once Add returned
// nil, v survives the crash of any process (with a durable engine). Any
// other error (the engine is unreachable, a codec failed) means v was not
// accepted: nothing is buffered in the process.
func (r *Runner[K, V]) Add(ctx context.Context, key K, v V) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.closed.Load() {
		return ErrClosed
	}
	// A Shutdown that began since the check above may still refuse v: count
	// and report it only once it is in.
	if err := r.engine.Put(ctx, key, v); err != nil {
		if errors.Is(err, store.ErrFull) {
			r.c.refused.Add(1)
		}
		return putErr(err)
	}
	r.c.received.Add(1)
	r.emit(EventReceived, key, 0, 1, 0, 0, nil)
	r.logf(slog.LevelDebug, "pacer: value received", key)
	if r.cfg.Debounce == 0 {
		r.emit(EventReady, key, 0, 1, 0, 0, nil)
	}
	return nil
}

// putErr returns the error of Add or AddTx for err, the engine's:
// ErrClosed once Shutdown drains the engine, ErrFull when its bound refused
// the value.
func putErr(err error) error {
	switch {
	case errors.Is(err, engine.ErrClosed):
		return ErrClosed
	case errors.Is(err, store.ErrFull):
		return ErrFull
	}
	return err
}

// ready reports a debounced burst of n values, the first added at first,
// that entered its key's queue; it runs on a debouncer's goroutine.
// Reading the clock is skipped when nobody looks.
func (r *Runner[K, V]) ready(key K, n int, first time.Time) {
	if r.cfg.OnEvent != nil || r.log.Enabled(context.Background(), slog.LevelDebug) {
		now := r.clk.Now()
		r.emit(EventReady, key, 0, n, now.Sub(first), 0, nil)
		r.logf(slog.LevelDebug, "pacer: burst ready", key, slog.Int("size", n), slog.Duration("delay", now.Sub(first)))
	}
}

// Release puts a key held after using up its attempts back in the queue,
// at the tail, with its attempts started over. It reports whether key was
// held, and ctx.Err() if ctx is done. With a Config.Store it releases the
// key for every instance, and returns the engine's error if it fails.
func (r *Runner[K, V]) Release(ctx context.Context, key K) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	ok, err := r.engine.Release(ctx, key)
	if !ok || err != nil {
		return false, err
	}
	r.logf(slog.LevelInfo, "pacer: key released", key)
	return true, nil
}

// Stats returns a snapshot of the Runner's state and counters, or
// ctx.Err() if ctx is done. With a Config.Store, the gauges are the
// engine's, for every instance sharing the queue, read in one call that
// may fail; the counters are this Runner's own.
func (r *Runner[K, V]) Stats(ctx context.Context) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	g, err := r.engine.Gauges(ctx)
	if err != nil {
		return Stats{}, err
	}
	s := Stats{
		Queued:        g.Queued,
		InFlight:      g.InFlight,
		Pending:       g.Pending,
		Held:          g.Held,
		Retrying:      g.Retrying,
		Blocked:       g.Blocked,
		Dead:          g.Dead,
		Debounce:      r.cfg.Debounce,
		Received:      r.c.received.Load(),
		Handled:       r.c.handled.Load(),
		Batches:       r.c.batches.Load(),
		Reruns:        r.c.reruns.Load(),
		Retries:       r.c.retries.Load(),
		Dropped:       r.c.dropped.Load(),
		Refused:       r.c.refused.Load(),
		RateLimitWait: time.Duration(r.c.rateWait.Load()),
		KeyLimited:    r.c.keyLimited.Load(),
		KeyWindowed:   r.c.keyWindowed.Load(),
	}
	// The counters are read one by one, and a value is counted received
	// only once Add put it in, so it may end first: clamp at 0.
	s.Values = int(max(int64(s.Received)-int64(s.Handled)-int64(s.Dropped), 0))
	if g.Values >= 0 { // the engine counts the values of every instance
		s.Values = g.Values
	}
	if r.adapt != nil {
		s.Debounce = r.adapt.CurrentAt(r.clk.Now())
	}
	return s, nil
}

// drop gives a batch up: OnDrop, EventDropped, a warning.
func (r *Runner[K, V]) drop(key K, vs []V, attempt int, err error, took time.Duration) {
	r.c.dropped.Add(uint64(len(vs)))
	r.emit(EventDropped, key, attempt, len(vs), 0, took, err)
	r.logf(slog.LevelWarn, "pacer: batch dropped", key, slog.Int("size", len(vs)), slog.Int("attempt", attempt), slog.Any("err", err))
	if r.cfg.OnDrop != nil {
		r.cfg.OnDrop(key, vs, err)
	}
}

func (r *Runner[K, V]) emit(kind EventKind, key K, attempt, size int, delay, took time.Duration, err error) {
	if r.cfg.OnEvent == nil {
		return
	}
	r.cfg.OnEvent(Event[K]{Kind: kind, Key: key, Time: r.clk.Now(), Attempt: attempt, Size: size, Delay: delay, Duration: took, Err: err})
}

// emitBlocking reports kind (EventRetry or EventHeld) for a batch that
// stays at the head of its key, with the number of values behind it.
func (r *Runner[K, V]) emitBlocking(kind EventKind, l engine.Lease[K, V], delay, took time.Duration, err error) {
	if r.cfg.OnEvent == nil {
		return
	}
	r.cfg.OnEvent(Event[K]{Kind: kind, Key: l.Key, Time: r.clk.Now(), Attempt: l.Attempt, Size: len(l.Values),
		Behind: r.engine.Behind(l.Key), Delay: delay, Duration: took, Err: err})
}

// logf logs msg with the key and attrs if level is enabled; the check comes
// first so that disabled levels cost no allocation.
func (r *Runner[K, V]) logf(level slog.Level, msg string, key K, attrs ...slog.Attr) {
	ctx := context.Background()
	if !r.log.Enabled(ctx, level) {
		return
	}
	r.log.LogAttrs(ctx, level, msg, append([]slog.Attr{slog.Any("key", key)}, attrs...)...)
}
