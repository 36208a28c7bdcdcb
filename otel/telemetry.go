package pacerotel

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of the tracer and the meter.
const scope = "github.com/pacerkit/pacer/otel"

// Config configures a [Telemetry]. The zero value is valid: the global
// providers of package otel, the Runner's Name as the queue, no key on
// spans, per-key series for the 5 longest-blocked keys.
type Config struct {
	// Queue names the Runner in spans and metrics (the attribute
	// pacer.queue). The default is the pacer.Config's Name; a Runner
	// without a Store has none, and then no pacer.queue attribute unless
	// Queue is set.
	Queue string
	// TracerProvider makes the spans. The default is otel's global one
	// (otel.GetTracerProvider), read at each call, so that an SDK installed
	// after New is used.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments. The default is otel's global one
	// (otel.GetMeterProvider), whose instruments forward to an SDK
	// installed later.
	MeterProvider metric.MeterProvider
	// Key puts each batch's key on its span, as the attribute pacer.key.
	// Keys may be personal data, and are as many as the users: the default
	// false leaves them out.
	Key bool
	// BlockedKeys is the number of the longest-blocked keys that get
	// series of their own (pacer.key.blocked.*, with the attribute
	// pacer.key). The default 0 means 5; -1 gives none.
	BlockedKeys int
}

// defaultBlockedKeys is what Config.BlockedKeys 0 means.
const defaultBlockedKeys = 5

// A Telemetry reports what one Runner does through OpenTelemetry: see the
// package doc for the spans and the instruments. Make it with [New] from
// the Runner's config, then wire its [Telemetry.Handler] and its
// [Telemetry.Observe], and if you like its [Telemetry.OnEvent] and its
// [Telemetry.Carry]. A Telemetry is safe for concurrent use; it serves
// one Runner.
type Telemetry[K comparable, V any] struct {
	queue     string
	tracing   tracing
	key       bool
	attempts  int           // the Runner's Retry.Attempts, pacer.Unlimited for none
	retry     pacer.Backoff // the Runner's, without jitter: the longest wait
	hold      bool          // Exhausted is ExhaustedHold
	withStore bool
	now       func() time.Time
	carrying  atomic.Bool // Carry gave a function: calls look for links

	queueAttrs   []attribute.KeyValue
	outcomes     [outcomeCount][]metric.RecordOption // pacer.queue and pacer.outcome, made once: a call allocates none
	addQueue     []metric.AddOption
	observeQueue metric.ObserveOption
	meter        metric.Meter
	meterOff     bool // the MeterProvider is otel's no-op for good
	duration     metric.Float64Histogram
	leasesLost   metric.Int64Counter
	stats        statsInstruments
	blocked      *blocked[K]
	topN         int
}

// New returns the Telemetry of the Runner that cfg configures, with what
// tc says. It reads from cfg the Runner's Name (the default queue),
// Retry.Attempts and Exhausted (to tell a batch retried from one dropped
// or held), Store and LeaseTTL, and Clock. It returns an error when tc is
// invalid or an instrument cannot be made.
func New[K comparable, V any](cfg pacer.Config[K, V], tc Config) (*Telemetry[K, V], error) {
	if tc.BlockedKeys < -1 {
		return nil, fmt.Errorf("pacerotel: Config.BlockedKeys must be >= -1, got %d", tc.BlockedKeys)
	}
	t := &Telemetry[K, V]{
		queue:     tc.Queue,
		key:       tc.Key,
		attempts:  cfg.Retry.Attempts,
		retry:     cfg.Retry,
		hold:      cfg.Exhausted == pacer.ExhaustedHold,
		withStore: cfg.Store != nil,
		now:       time.Now,
		topN:      tc.BlockedKeys,
	}
	if t.queue == "" {
		t.queue = cfg.Name
	}
	t.retry.Jitter = 0
	if t.attempts == 0 {
		t.attempts = defaultAttempts
	}
	if t.topN == 0 {
		t.topN = defaultBlockedKeys
	}
	if cfg.Clock != nil {
		t.now = cfg.Clock.Now
	}
	grace := time.Duration(0)
	if t.withStore {
		grace = cfg.LeaseTTL
		if grace == 0 {
			grace = defaultLeaseTTL
		}
	}
	t.blocked = newBlocked[K](trackLimit, grace)
	t.tracing.init(tc.TracerProvider, t.spanName())

	mp := tc.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	_, t.meterOff = mp.(metricnoop.MeterProvider)
	t.meter = mp.Meter(scope)
	if t.queue != "" {
		t.queueAttrs = []attribute.KeyValue{attribute.String("pacer.queue", t.queue)}
	}
	set := attribute.NewSet(t.queueAttrs...)
	t.addQueue = []metric.AddOption{metric.WithAttributeSet(set)}
	t.observeQueue = metric.WithAttributeSet(set)
	for o := range Outcome(outcomeCount) {
		attrs := append(append([]attribute.KeyValue(nil), t.queueAttrs...), attribute.String("pacer.outcome", o.String()))
		t.outcomes[o] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	}
	var err error
	t.duration, err = t.meter.Float64Histogram("pacer.batch.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Handler calls' running time, by pacer.outcome."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60))
	if err != nil {
		return nil, fmt.Errorf("pacerotel: %w", err)
	}
	t.leasesLost, err = t.meter.Int64Counter("pacer.leases.lost",
		metric.WithUnit("{lease}"),
		metric.WithDescription("Leases the Runner lost while their handler ran: another holder runs the batch again."))
	if err != nil {
		return nil, fmt.Errorf("pacerotel: %w", err)
	}
	if err := t.stats.make(t.meter); err != nil {
		return nil, fmt.Errorf("pacerotel: %w", err)
	}
	return t, nil
}

// defaultAttempts is what pacer's Backoff.Attempts 0 means; a test keeps
// the two the same.
const defaultAttempts = 25

// defaultLeaseTTL is what pacer's Config.LeaseTTL 0 means.
const defaultLeaseTTL = 30 * time.Second

// spanName is the name of the handler calls' spans, as the messaging
// conventions name a consumer's: the operation, then the destination.
func (t *Telemetry[K, V]) spanName() string {
	if t.queue == "" {
		return "process"
	}
	return "process " + t.queue
}
