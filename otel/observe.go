package pacerotel

import (
	"context"
	"errors"

	"github.com/pacerkit/pacer"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// statsInstruments are the observable instruments read from Runner.Stats
// and from the blocked keys at each collection.
type statsInstruments struct {
	received, handled, dropped, refused metric.Int64ObservableCounter
	batches, retries, reruns            metric.Int64ObservableCounter
	rateWait                            metric.Float64ObservableCounter

	values, queued, blockedValues, inFlight, dead metric.Int64ObservableGauge
	pending, retrying, held, blockedKeys          metric.Int64ObservableGauge
	debounce                                      metric.Float64ObservableGauge

	oldestAge             metric.Float64ObservableGauge
	oldestAttempt         metric.Int64ObservableGauge
	keyAge                metric.Float64ObservableGauge
	keyAttempt, keyValues metric.Int64ObservableGauge
	all                   []metric.Observable
}

// make creates the instruments on m.
func (s *statsInstruments) make(m metric.Meter) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		s.all = append(s.all, c)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		s.all = append(s.all, g)
		return g
	}
	seconds := func(name, desc string) metric.Float64ObservableGauge {
		g, err := m.Float64ObservableGauge(name, metric.WithUnit("s"), metric.WithDescription(desc))
		errs = append(errs, err)
		s.all = append(s.all, g)
		return g
	}
	s.received = counter("pacer.values.received", "{value}", "Values Add accepted.")
	s.handled = counter("pacer.values.handled", "{value}", "Values whose handler call succeeded.")
	s.dropped = counter("pacer.values.dropped", "{value}", "Values given up (OnDrop).")
	s.refused = counter("pacer.values.refused", "{value}", "Values Add refused with ErrFull.")
	s.batches = counter("pacer.batches", "{batch}", "Handler calls, retries included.")
	s.retries = counter("pacer.batches.retried", "{batch}", "Failed handler calls that will be retried.")
	s.reruns = counter("pacer.reruns", "{batch}", "Times a key went back to the queue with values left behind its batch.")
	var err error
	s.rateWait, err = m.Float64ObservableCounter("pacer.rate_limit.wait", metric.WithUnit("s"),
		metric.WithDescription("Time waited for rate limits: the Limiter before calls, a ratelimit.Transport in them."))
	errs = append(errs, err)
	s.all = append(s.all, s.rateWait)

	s.values = gauge("pacer.values", "{value}", "Values held: debouncing, queued or being handled.")
	s.queued = gauge("pacer.queued", "{value}", "Values queued and not being handled.")
	s.blockedValues = gauge("pacer.blocked.values", "{value}", "Values queued behind the batches of retrying keys.")
	s.inFlight = gauge("pacer.in_flight", "{batch}", "Batches being handled.")
	s.dead = gauge("pacer.dead", "{batch}", "Dead letters the Store keeps.")
	s.pending = gauge("pacer.pending", "{key}", "Keys whose debounce is collecting values.")
	s.retrying = gauge("pacer.retrying", "{key}", "Keys whose batch failed and waits for its retry.")
	s.held = gauge("pacer.held", "{key}", "Keys held after using up their attempts.")
	s.blockedKeys = gauge("pacer.blocked.keys", "{key}", "Keys blocked by a failing batch: retrying or held.")
	s.debounce = seconds("pacer.debounce", "The current quiet period.")

	s.oldestAge = seconds("pacer.blocked.oldest.age", "How long the key blocked longest has been blocked by a failing batch; 0 when none is.")
	s.oldestAttempt = gauge("pacer.blocked.oldest.attempt", "{attempt}", "The attempt of the last failed call of the key blocked longest; 0 when none is.")
	s.keyAge = seconds("pacer.key.blocked.age", "How long the key has been blocked, for the keys blocked longest.")
	s.keyAttempt = gauge("pacer.key.blocked.attempt", "{attempt}", "The attempt of the key's last failed call, for the keys blocked longest.")
	s.keyValues = gauge("pacer.key.blocked.values", "{value}", "The key's failing batch and the values behind it, for the keys blocked longest.")
	return errors.Join(errs...)
}

// A Stater is what Observe reads: a *pacer.Runner.
type Stater interface {
	Stats(ctx context.Context) (pacer.Stats, error)
}

// Observe registers, on the Telemetry's meter, a callback that reads
// r.Stats at each collection and reports its counters and gauges, and the
// keys that Telemetry.OnEvent saw blocked. With a Store, Stats is one call
// to the engine, bounded by the collection's ctx; when it fails nothing is
// reported for that collection. The per-key series are those of the
// Config.BlockedKeys keys blocked longest, found in O(n·BlockedKeys) for n
// keys followed. Unregister the returned Registration when r is shut
// down.
func (t *Telemetry[K, V]) Observe(r Stater) (metric.Registration, error) {
	return t.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st, err := r.Stats(ctx)
		if err != nil {
			return err
		}
		t.observeStats(o, st)
		t.observeBlocked(o, st)
		return nil
	}, t.stats.all...)
}

func (t *Telemetry[K, V]) observeStats(o metric.Observer, st pacer.Stats) {
	s, q := &t.stats, t.observeQueue
	o.ObserveInt64(s.received, int64(st.Received), q)
	o.ObserveInt64(s.handled, int64(st.Handled), q)
	o.ObserveInt64(s.dropped, int64(st.Dropped), q)
	o.ObserveInt64(s.refused, int64(st.Refused), q)
	o.ObserveInt64(s.batches, int64(st.Batches), q)
	o.ObserveInt64(s.retries, int64(st.Retries), q)
	o.ObserveInt64(s.reruns, int64(st.Reruns), q)
	o.ObserveFloat64(s.rateWait, st.RateLimitWait.Seconds(), q)
	o.ObserveInt64(s.values, int64(st.Values), q)
	o.ObserveInt64(s.queued, int64(st.Queued), q)
	o.ObserveInt64(s.blockedValues, int64(st.Blocked), q)
	o.ObserveInt64(s.inFlight, int64(st.InFlight), q)
	o.ObserveInt64(s.dead, int64(st.Dead), q)
	o.ObserveInt64(s.pending, int64(st.Pending), q)
	o.ObserveInt64(s.retrying, int64(st.Retrying), q)
	o.ObserveInt64(s.held, int64(st.Held), q)
	o.ObserveInt64(s.blockedKeys, int64(st.Retrying+st.Held), q)
	o.ObserveFloat64(s.debounce, st.Debounce.Seconds(), q)
}

func (t *Telemetry[K, V]) observeBlocked(o metric.Observer, st pacer.Stats) {
	s, q := &t.stats, t.observeQueue
	now := t.now()
	oldest, ok, top := t.blocked.snapshotAt(now, t.topN, st.Retrying+st.Held)
	if !ok {
		o.ObserveFloat64(s.oldestAge, 0, q)
		o.ObserveInt64(s.oldestAttempt, 0, q)
		return
	}
	o.ObserveFloat64(s.oldestAge, max(now.Sub(oldest.since).Seconds(), 0), q)
	o.ObserveInt64(s.oldestAttempt, int64(oldest.attempt), q)
	for _, k := range top {
		state := "retrying"
		if k.held {
			state = "held"
		}
		attrs := append(append(make([]attribute.KeyValue, 0, 3), t.queueAttrs...),
			attribute.String("pacer.key", keyString(k.key)), attribute.String("pacer.state", state))
		a := metric.WithAttributeSet(attribute.NewSet(attrs...))
		o.ObserveFloat64(s.keyAge, max(now.Sub(k.since).Seconds(), 0), a)
		o.ObserveInt64(s.keyAttempt, int64(k.attempt), a)
		o.ObserveInt64(s.keyValues, int64(k.values), a)
	}
}
