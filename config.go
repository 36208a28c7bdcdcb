package pacer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

// Config configures a [Runner]. The zero value is valid: no debounce,
// coalesced batches, one worker, 25 attempts per batch with exponential
// backoff from 1 s to 5 min, then the batch is dropped; no rate limit, no
// window, no bound on the values held; state in the process.
//
// A field that does not apply to the Runner's mode is refused by [New]
// with an error that names it, never ignored:
//   - without [Config.Store]: Name, Codec, KeyCodec, LeaseTTL and
//     AckInBackground;
//   - with a Store: DropPendingOnShutdown; and AckInBackground
//     unless the Store implements [store.FinishClaimer];
//   - without Debounce: MaxWait, Adaptive and DropPendingOnShutdown;
//   - without Adaptive.Max: Adaptive.Backlog and Adaptive.HalfLife;
//   - with Retry.Attempts [Unlimited]: Exhausted [ExhaustedHold], since no
//     batch uses up its attempts.
type Config[K comparable, V any] struct {
	// Debounce is the quiet period: a key's values are collected until no
	// new value came for Debounce, then they enter the key's queue as one
	// burst. The default 0 queues every value at once.
	Debounce time.Duration
	// MaxWait bounds a burst: a key that never goes quiet is still queued
	// MaxWait after its first value. 0 (the default) means no bound;
	// otherwise it must be >= Debounce. It needs Debounce > 0.
	MaxWait time.Duration
	// MaxBatch is the most values one handler call gets:
	//   - 0 (the default) coalesces: the handler gets everything waiting
	//     for the key, and values that arrive meanwhile make the key run
	//     again afterwards, from the tail of the queue;
	//   - 1 is strict order: one value per call, and a failing value is
	//     retried before any later value of its key.
	MaxBatch int
	// Workers is the number of handler calls that may run at once, each for
	// a different key (or up to PerKey of one key). The default is 1.
	Workers int
	// PerKey is how many batches of one key may be handled at once, each
	// by its own worker, as BullMQ Pro's group concurrency or pg-boss's
	// groupConcurrency allow; 0 and 1 (the default) mean one, the order of
	// a key's batches. With PerKey n > 1:
	//   - a key's batches start in Add order (batch 2 starts after batch
	//     1, with the values behind it), and up to n of them run at once,
	//     so they may end in any order: a key's values are no longer
	//     handled one batch after the other;
	//   - each batch ends by itself: its Ack removes its values only; a
	//     retried or deferred batch runs again before the key's values
	//     that did not start yet, which wait for it; a held batch holds
	//     the key (no batch of it starts until Release), while its batches
	//     already running go on;
	//   - a key with fewer than n batches running and values waiting is
	//     ready again, behind the keys already waiting;
	//   - in the process, each batch has its own lease of the Runner's
	//     queue (see fifo.GroupsConfig.PerKey); with a Store, its own lease
	//     and [Fence], and the Store must implement [store.PerKeyClaimer].
	//
	// New refuses PerKey > 1 with MaxBatch 1, strict order, which runs one
	// value of a key at a time by definition, and with a Store that does
	// not implement store.PerKeyClaimer.
	PerKey int
	// Retry is the backoff for handler errors that are neither [Permanent]
	// nor [RetryAfter].
	Retry Backoff
	// Exhausted says what happens to a batch that used up
	// [Backoff.Attempts]: [ExhaustedDrop] (the default) or [ExhaustedHold].
	// ExhaustedHold needs Retry.Attempts other than [Unlimited].
	Exhausted Exhausted
	// Tenant, when set, maps a key to its tenant: ready keys then take
	// turns across tenants, each tenant's turns in proportion to its
	// weight, and oldest-ready first within a tenant, so that a tenant
	// with a large backlog does not keep one with a few keys waiting
	// behind it (see Fairness in package store; the order holds across
	// instances). A tenant back from having nothing ready earns no credit
	// for the turns it did not take. A key keeps the tenant it had when it
	// got its first value, until it has none left. "" is no tenant: such
	// keys take turns as one tenant of weight 1. With Config.Store, the
	// Store must implement [store.FairTenants].
	Tenant func(key K) string
	// TenantWeight, when set, gives a tenant's weight, from 1 to
	// [store.MaxWeight] (values out of range are brought into it), read at
	// every Add: a change counts from the tenant's next turn. nil weighs
	// every tenant 1. It needs Tenant.
	TenantWeight func(tenant string) int
	// Limiter, when set, is waited on for one token before every handler
	// call, retries included. A Limiter that is also a [ratelimit.Pauser]
	// (as [ratelimit.Bucket] is) is paused by a [PauseAll] error and by a
	// handler error that wraps a [*ratelimit.LimitError]; a [RetryAfter]
	// error never pauses it. A bucket for a remote API belongs:
	//   - here, when one handler call makes one request;
	//   - in the handler's [ratelimit.Transport], when a call makes
	//     several, so that each waits its turn;
	//   - in both, the same value: no call starts before a token is there,
	//     and the call's first request goes out on the token taken here, so
	//     no request spends two.
	//
	// Either way the waits show in [Stats].RateLimitWait.
	Limiter ratelimit.Limiter
	// Window, when set, is when batches may start: outside it the key waits
	// for the window to open, and a running handler's ctx is cancelled when
	// the window closes, with cause [window.ErrOutside]. The Runner reads
	// the window on Clock. It must not be the zero [window.Schedule], which
	// never opens.
	Window *window.Schedule
	// KeyLimit, when set, is a rate limit per key, checked before every
	// handler call of the key, retries included: [ratelimit.Keyed] in the
	// process, redis/redisrate's or pg/pgrate's Keyed (string keys) shared
	// by every instance. A key whose bucket has no token is not waited on:
	// its batch is deferred, without using an attempt, until the token is
	// due ([ratelimit.KeyGate].TakeKey's wait), and the worker takes the
	// next ready key, so a slow key never holds the workers of the others.
	//   - A [RetryAfter] error pauses the key's bucket for its delay, on
	//     top of retrying the key after it, so that every user of the
	//     KeyLimit (other Runners, instances, a [ratelimit.Transport]
	//     over Keyed.For) waits too; other keys go on.
	//   - Limiter still applies beside it: a batch needs its key's token,
	//     taken first, then the Limiter's, waited for.
	//   - A KeyLimit that fails (its server unreachable) defers the batch
	//     by Retry.Initial, with a warning, and asks again then.
	//   - [Stats].KeyLimited counts the deferrals, [Runner.Explain] tells
	//     when the key's next token comes.
	//
	// See the package doc, "Limits and windows per key".
	KeyLimit ratelimit.KeyGate[K]
	// KeyRate, when its Interval is set, is a rate limit per key that the
	// engine keeps itself: a key takes at most Burst batches in a row,
	// then one every Interval, over every instance that shares the Store.
	// With a Config.Store, the store takes the key's token in the claim
	// that leases the batch ([store.KeyRate]), so the limit costs no call
	// of its own; a key without a token is deferred in the store until it
	// has one, and the claim leases the next ready key instead, so no
	// worker waits for it. It needs a Store that implements
	// [store.KeyRateClaimer]. Without a Store, the Runner keeps one
	// bucket per key in the process, taken before the handler as
	// KeyLimit's are.
	//   - Every batch takes a token, retries included, and with PerKey
	//     every one of a key's batches.
	//   - With a Store, the token is taken when the batch is leased: a
	//     batch that then waits for Window or Limiter starts its handler
	//     that much later, so two handler calls of a key may come closer
	//     together than Interval by that wait.
	//   - A [RetryAfter] error retries the key after its delay, as it
	//     does without KeyRate; to pause a bucket that other users of an
	//     API share, use KeyLimit.
	//   - [Runner.Explain] tells when the key's next token comes, where
	//     the store can tell (store.KeyInfo.ForToken).
	//
	// KeyRate and KeyLimit may be set together: a batch then needs both.
	KeyRate store.KeyRate
	// KeyWindow, when set, gives each key its own delivery window (a
	// reminder's hours in its user's time zone), read on Clock: nil for a
	// key without one. It is called once before every handler call of the
	// key, so it must be fast and safe for concurrent use; the Runner
	// keeps nothing of what it returns.
	//   - A key outside its window is deferred until the window next
	//     opens, without using an attempt or holding a worker.
	//   - A running handler's ctx is cancelled when the key's window
	//     closes, with cause [window.ErrOutside], and its batch is
	//     deferred until the window opens again, as the close of Window
	//     does (see [EventRetry]).
	//   - It composes with Window: a batch runs when both are open.
	//   - A zero Schedule never opens: the key's batch is deferred by
	//     Retry.Max, with an error in the log, until KeyWindow says
	//     otherwise.
	//   - [Stats].KeyWindowed counts the deferrals and the cuts,
	//     [Runner.Explain] tells until when the key is outside its window.
	KeyWindow func(key K) *window.Schedule
	// Adaptive, when its Max is set, lengthens the quiet period under load.
	Adaptive Adaptive
	// MaxValues bounds the values held at once: debouncing, queued, waiting
	// for a retry, held or being handled. The default 0 means no bound: an
	// embedded library should not start refusing work at a number it cannot
	// know, so set it to protect the memory of the process, or of a Store,
	// from a backlog that outgrows it.
	//   - Past it, [Runner.Add] refuses a value at once with [ErrFull] (a
	//     webhook answers 429 or 503 with it) and never blocks; a value once
	//     accepted is never refused later.
	//   - In the process, it bounds the values of this Runner.
	//   - With a Store, it bounds the values stored in the Runner's queue by
	//     every instance together, in the same states (dead letters do not
	//     count): the engine checks it in the same atomic step as each Add
	//     and AddTx ([store.AddParams].MaxValues), so no two instances can
	//     together take the queue past it. Give every instance the same.
	//   - [Stats].Values and [Stats].Refused show the level and the
	//     refusals.
	MaxValues int
	// DropPendingOnShutdown makes Shutdown hand the bursts still being
	// debounced to OnDrop (with [ErrClosed]) instead of queueing them to be
	// handled, which is the default. It needs Debounce > 0. New refuses it
	// with a Store, where bursts debounce in the engine and Shutdown leaves
	// them there.
	DropPendingOnShutdown bool
	// Logger receives structured logs: Debug for each value and batch, Warn
	// for retries, drops and holds, Error for handler panics. nil discards.
	Logger *slog.Logger
	// OnEvent, when set, is called for every lifecycle step ([Event]):
	//   - synchronously, on the goroutine where it happened (Add's caller, a
	//     worker, or the debouncer's goroutine), so it must be fast;
	//   - it must not call [Runner.Shutdown];
	//   - a panic in it is not recovered: it crashes the program, as a
	//     panic in the function of [time.AfterFunc] does.
	OnEvent func(Event[K])
	// OnDrop, when set, is called with every batch the Runner gives up on,
	// and why:
	//   - the handler's [Permanent] error, or its last error once
	//     [Backoff.Attempts] are used up;
	//   - [ErrClosed], in the process, for what a Shutdown did not handle
	//     (held keys, or everything left when its ctx expired); a Store
	//     keeps those instead;
	//   - with a Store, an error wrapping [ErrLeaseLost] for a batch whose
	//     last attempt's lease lapsed, or wrapping [ErrUndecodable] for
	//     stored values that do not decode (the batch has those that do).
	//
	// OnDrop is called synchronously, like OnEvent, before the key's next
	// values may start; it must not call Shutdown, and a panic in it
	// crashes the program: a dead-letter hook that fails must not lose the
	// batch silently. Without a Store, OnDrop is the only record of a
	// dropped batch. With an engine that implements [store.DeadLetters],
	// the engine also keeps the batch, as stored, as a dead letter once
	// OnDrop returned, which [Runner.DeadLetters] lists, [Runner.Redrive]
	// puts back at its key's tail and [Runner.Purge] removes, from any
	// instance and after a restart.
	OnDrop func(key K, batch []V, err error)
	// Carry, when set, is called by Add with its ctx, and the bytes it
	// returns travel with the value to the handler, which reads those of
	// its batch with [Carried]: the trace context of each Add, for a span
	// of the handler linked to the spans of the Adds (the otel module's
	// Telemetry.Carry). nil carries nothing. Carry runs on Add's
	// goroutine, so it must be fast, and the Runner keeps the bytes it
	// returns: it must not modify them afterwards.
	//
	// With a Store, the bytes are stored with the value, so that they reach
	// the handler of whichever instance leases it: Carry may return at
	// most 58 bytes there (Add fails otherwise), and the value is stored
	// as 0xFF, their length, the bytes, then the Codec's bytes. A value
	// that carries nothing is stored as the Codec's bytes alone, framed (2
	// bytes more) only if they begin with 0xFF. A Runner without Carry
	// stores no frame and still reads the values stored with Carry,
	// without what they carry, so that Carry can be turned on or off over
	// a queue that holds values. No UTF-8, so no JSON, begins with 0xFF;
	// with a Codec whose bytes may, a value stored without Carry that
	// reads as a frame whose payload decodes is read as framed.
	Carry func(ctx context.Context) []byte
	// Clock is the time source. The default is clock.New(), the real clock,
	// which also works inside testing/synctest bubbles. With a Store, the
	// engine's own clock decides when bursts, retry delays and leases come
	// due; this one times the lease renewals, the window and the Limiter.
	Clock clock.Clock
	// Instance names this Runner's process for operators. The default is
	// the host's name and the process's ID, "hostname:pid". It may be any
	// string; one that tells the instances of a queue apart serves best.
	// With a Store, every lease the Runner takes carries it
	// ([store.ClaimParams].Holder), so that inspecting the store shows
	// which instance holds a key ([store.KeyInfo].Holder).
	Instance string

	// Store, when set, keeps the Runner's state in a [store.Store] engine
	// ([store.Memory], redis/redisstore, pg/pgstore) under the queue Name,
	// so that Runners of several processes sharing it keep every guarantee
	// across all of them. The default nil keeps the state in the process,
	// unencoded. With a Store:
	//   - a key's values added on different instances join one debounced
	//     burst: Debounce, MaxWait and Adaptive go to the engine with each
	//     Add;
	//   - a key is leased by one worker of one instance at a time, in order,
	//     for LeaseTTL, renewed while the handler works (see [ErrLeaseLost]
	//     and [Fence]);
	//   - what Add accepted survives the crash of any process (with a
	//     durable engine), and delivery is at least once: a batch whose
	//     holder died, or lost its lease, runs again;
	//   - retries, held keys and dead letters live in the engine, and
	//     Shutdown leaves what is stored there for the next Runner instead
	//     of handing it to OnDrop;
	//   - the handler's error goes to the engine with a batch it retries
	//     or holds ([store.Outcome].Err), its first KiB, for an operator to
	//     read ([store.KeyInfo].Err), and whole with a dropped batch, as
	//     its dead letter's error;
	//   - MaxValues bounds the queue for every instance together;
	//   - with an engine that implements [store.FinishClaimer], a worker
	//     that ends a batch leases its next one in the same call.
	//
	// The Runner does not close the Store.
	Store store.Store
	// Name is the Runner's queue in Store: Runners that share a Store and
	// a Name share their keys, their leases and their order. It is
	// required with Store.
	Name string
	// Codec encodes values for Store. The default is JSON[V]{} (see [JSON]).
	Codec Codec[V]
	// KeyCodec encodes keys for Store. Keys whose kind is string or an
	// integer need none; with Store, any other key type requires one.
	KeyCodec Codec[K]
	// LeaseTTL is how long a lease on Store lasts without renewal. The
	// default is 30 seconds; it must be 0 or at least 100 ms.
	//   - A worker renews its lease every LeaseTTL/3 while it works on the
	//     batch (LeaseTTL/10 after a renewal failed); a holder that dies
	//     leaves its key to another instance after at most LeaseTTL.
	//   - A holder stops by its own clock: its lease's deadline is when the
	//     call that last proved the lease (the claim, then each renewal
	//     that succeeded) was sent, plus LeaseTTL less a safety margin of
	//     LeaseTTL/10 + 10 ms. At that deadline the handler's ctx is
	//     cancelled with [ErrLeaseLost], whatever the renewal in flight
	//     does.
	//   - A renewal is given up at the lease's deadline, and a call that
	//     ends a lease LeaseTTL after it was sent, even with a client that
	//     ignores ctx deadlines or a connection that stopped answering, as
	//     in a network partition: the Runner goes on, and the call ends
	//     when the client gives up (Shutdown waits for it).
	//   - A batch whose lease passed its deadline before the handler
	//     started (the process stalled, or waited for the Window or the
	//     Limiter while the renewals failed) is neither handled nor ended:
	//     it is its next holder's.
	//
	// The handler is thus stopped before another instance can lease the
	// key, provided that the engine counts a lease's TTL from when it got
	// the call (after the holder sent it), on a clock that runs at the
	// rate of the holder's monotonic clock within a tenth (real clocks
	// differ by far less), and that the holder acts on its deadline within
	// 10 ms. A process paused after that last check (SIGSTOP, a long GC)
	// learns that its lease is lost only when it runs again: [Fence] guards
	// the writes of such a holder.
	LeaseTTL time.Duration
	// AckInBackground lets a worker take its next batch while the Ack of
	// a quick one (run in less than LeaseTTL/10) is still on its way to
	// Store. It needs a Store that implements [store.FinishClaimer]:
	//   - Acks share calls more, and a worker of a quick handler does not
	//     wait for a commit per batch (throughput: BENCHMARKS.md);
	//   - the key of the batch stays leased until its Ack ends, so its
	//     order and exclusivity are kept;
	//   - a worker may hold one lease more, claimed by its Ack, while it
	//     runs its batch, so the order across keys may shift by a batch;
	//   - what the Ack tells (a failure, in the log; more values, as
	//     [EventRerun]) comes after [EventFinished];
	//   - Shutdown waits for the Acks in the background.
	AckInBackground bool
}

// storeOnly returns the name of the first field set that applies only
// with a Store, or "".
func (c Config[K, V]) storeOnly() string {
	switch {
	case c.Name != "":
		return "Name"
	case c.Codec != nil:
		return "Codec"
	case c.KeyCodec != nil:
		return "KeyCodec"
	case c.LeaseTTL != 0:
		return "LeaseTTL"
	case c.AckInBackground:
		return "AckInBackground"
	}
	return ""
}

// defaultInstance is what Config.Instance "" means: "hostname:pid", read
// once.
var defaultInstance = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
})

// defaultLeaseTTL is what Config.LeaseTTL 0 means.
const defaultLeaseTTL = 30 * time.Second

// minLeaseTTL is the shortest Config.LeaseTTL: its safety margin
// (engine.Margin) takes a fifth of it.
const minLeaseTTL = 100 * time.Millisecond

// Exhausted is what a Runner does with a batch that used up its attempts.
type Exhausted uint8

const (
	// ExhaustedDrop gives the batch up (OnDrop, EventDropped); the key's
	// next values proceed.
	ExhaustedDrop Exhausted = iota
	// ExhaustedHold keeps the batch at the head of its key and holds the
	// key (EventHeld): nothing of it runs until Runner.Release.
	ExhaustedHold
)

func (c Config[K, V]) withDefaults() Config[K, V] {
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.New()
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = defaultLeaseTTL
	}
	if c.Instance == "" {
		c.Instance = defaultInstance()
	}
	if c.Store != nil {
		if c.Codec == nil {
			c.Codec = JSON[V]{}
		}
		if c.KeyCodec == nil {
			c.KeyCodec = keyCodec[K]()
		}
	}
	c.Retry = c.Retry.withDefaults()
	return c
}

func (c Config[K, V]) validate() error {
	switch {
	case c.Debounce < 0:
		return fmt.Errorf("pacer: Config.Debounce must be >= 0, got %v", c.Debounce)
	case c.MaxWait < 0:
		return fmt.Errorf("pacer: Config.MaxWait must be >= 0, got %v", c.MaxWait)
	case c.MaxWait > 0 && c.Debounce == 0:
		return fmt.Errorf("pacer: Config.MaxWait needs Config.Debounce > 0, got MaxWait %v", c.MaxWait)
	case c.MaxWait > 0 && c.MaxWait < c.Debounce:
		return fmt.Errorf("pacer: Config.MaxWait must be 0 or >= Config.Debounce (%v), got %v", c.Debounce, c.MaxWait)
	case c.MaxBatch < 0:
		return fmt.Errorf("pacer: Config.MaxBatch must be >= 0, got %d", c.MaxBatch)
	case c.Workers < 0:
		return fmt.Errorf("pacer: Config.Workers must be >= 0, got %d", c.Workers)
	case c.PerKey < 0:
		return fmt.Errorf("pacer: Config.PerKey must be >= 0, got %d", c.PerKey)
	case c.PerKey > 1 && c.MaxBatch == 1:
		return fmt.Errorf("pacer: Config.PerKey must be 0 or 1 with Config.MaxBatch 1 (strict order: one value of a key at a time), got %d", c.PerKey)
	case c.PerKey > 1 && c.Store != nil && !claimsPerKey(c.Store):
		return fmt.Errorf("pacer: Config.PerKey %d needs a Config.Store that implements store.PerKeyClaimer, which %T does not", c.PerKey, c.Store)
	case c.MaxValues < 0:
		return fmt.Errorf("pacer: Config.MaxValues must be >= 0, got %d", c.MaxValues)
	case c.Exhausted > ExhaustedHold:
		return fmt.Errorf("pacer: Config.Exhausted must be ExhaustedDrop or ExhaustedHold, got %d", c.Exhausted)
	case c.Window != nil && c.Window.IsZero():
		// Nothing would ever start, and a graceful Shutdown would never end.
		return fmt.Errorf("pacer: Config.Window must not be the zero Schedule, which never opens")
	case c.KeyRate.On() && c.Store != nil && !claimsKeyRate(c.Store):
		return fmt.Errorf("pacer: Config.KeyRate needs a Config.Store that implements store.KeyRateClaimer, which %T does not", c.Store)
	case isNilPointer(c.KeyLimit):
		return fmt.Errorf("pacer: Config.KeyLimit is a nil %T: set a limiter made by its constructor, or leave the field nil", c.KeyLimit)
	case c.LeaseTTL != 0 && c.LeaseTTL < minLeaseTTL:
		return fmt.Errorf("pacer: Config.LeaseTTL must be 0 (30 s) or at least %v, got %v", minLeaseTTL, c.LeaseTTL)
	case c.Store != nil && c.Name == "":
		return fmt.Errorf("pacer: Config.Name must be set with Config.Store: it names the Runner's queue in the store")
	case c.Store != nil && c.KeyCodec == nil && keyCodec[K]() == nil:
		return fmt.Errorf("pacer: Config.KeyCodec must be set with Config.Store for keys of type %v: only string and integer keys have a default encoding", reflect.TypeFor[K]())
	case c.Store != nil && c.DropPendingOnShutdown:
		return fmt.Errorf("pacer: Config.DropPendingOnShutdown does not apply with Config.Store: bursts debounce in the store, and Shutdown leaves them there")
	case c.DropPendingOnShutdown && c.Debounce == 0:
		return fmt.Errorf("pacer: Config.DropPendingOnShutdown needs Config.Debounce > 0: without it no burst is pending at Shutdown")
	case c.Store != nil && c.AckInBackground && !finishClaims(c.Store):
		return fmt.Errorf("pacer: Config.AckInBackground needs a Config.Store that implements store.FinishClaimer, which %T does not", c.Store)
	case c.Exhausted == ExhaustedHold && c.Retry.Attempts == Unlimited:
		return fmt.Errorf("pacer: Config.Exhausted does not apply with Config.Retry.Attempts Unlimited: no batch uses up its attempts")
	}
	if f := c.storeOnly(); c.Store == nil && f != "" {
		return fmt.Errorf("pacer: Config.%s applies only with Config.Store, which is nil", f)
	}
	if err := c.KeyRate.Validate(); err != nil {
		return fmt.Errorf("pacer: Config.%s", strings.TrimPrefix(err.Error(), "store: "))
	}
	if err := c.Retry.validate(); err != nil {
		return err
	}
	if err := c.validateTenant(); err != nil {
		return err
	}
	return c.Adaptive.validate(c.Debounce)
}

// finishClaims reports whether s ends a lease and claims in one call, which
// AckInBackground needs.
func finishClaims(s store.Store) bool {
	_, ok := s.(store.FinishClaimer)
	return ok
}

// claimsKeyRate reports whether s keeps a rate per key in its claims,
// which KeyRate with a Store needs.
func claimsKeyRate(s store.Store) bool {
	kr, ok := s.(store.KeyRateClaimer)
	return ok && kr.ClaimsKeyRate()
}

// claimsPerKey reports whether s leases several batches of a key at once,
// which PerKey > 1 needs.
func claimsPerKey(s store.Store) bool {
	pk, ok := s.(store.PerKeyClaimer)
	return ok && pk.ClaimsPerKey()
}
