package pacerotel

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// errPanicked is recorded on the span of a call whose handler panicked:
// the Runner recovers the panic, after the span ended.
var errPanicked = errors.New("pacer: handler panicked")

// Handler returns h wrapped so that each call runs in a span and is timed
// in pacer.batch.duration (see the package doc). The span is the child of
// the handler's ctx and h gets its ctx; it ends when h returns, or panics
// (the panic goes on to the Runner, which recovers it).
//
// When the providers are no-ops for good (otel's noop packages) Handler
// returns h itself; with otel's global providers before an SDK is
// installed, a call checks that nothing records and calls h.
func (t *Telemetry[K, V]) Handler(h pacer.Handler[K, V]) pacer.Handler[K, V] {
	if t.tracing.off() && t.meterOff {
		return h
	}
	return func(ctx context.Context, key K, batch []V) error {
		tr := t.tracing.tracer()
		metered := t.duration.Enabled(ctx)
		if tr == nil && !metered {
			return h(ctx, key, batch)
		}
		return t.call(ctx, tr, metered, h, key, batch)
	}
}

// call runs h in a span of tr, when not nil, and measures it when metered.
// The lease lost and the blocked keys count with the duration: a View
// that drops pacer.batch.duration stops them too.
func (t *Telemetry[K, V]) call(ctx context.Context, tr trace.Tracer, metered bool, h pacer.Handler[K, V], key K, batch []V) (err error) {
	var start time.Time // for the duration: the span reads the clock itself
	if metered {
		start = time.Now()
	}
	hctx, span, dropped := ctx, trace.Span(nil), 0
	if tr != nil {
		opts := consumer
		if t.carrying.Load() { // no Carried to look up otherwise
			var ls []trace.Link
			if ls, dropped = links(ctx); ls != nil {
				// Given at the start, where a sampler sees them.
				opts = []trace.SpanStartOption{consumer[0], trace.WithLinks(ls...)}
			}
		}
		// The SDK reads the clock for the span's start and end itself: a
		// time given as an option would cost an allocation each.
		hctx, span = tr.Start(ctx, t.tracing.name, opts...)
		if !span.IsRecording() {
			span.End()
			span = nil
		}
	}
	returned := false
	defer func() {
		var took time.Duration
		if metered {
			took = time.Since(start)
		}
		attempt, failure := pacer.Attempt(ctx), err
		if !returned {
			failure = errPanicked
		}
		o := t.outcome(ctx, attempt, failure)
		if o == OutcomeLeaseLost && failure == nil {
			// The call succeeded, but its batch runs again elsewhere.
			failure = context.Cause(ctx)
		}
		if span != nil {
			// One call with every attribute: the SDK copies them once.
			buf := attrBufs.Get().(*[]attribute.KeyValue)
			*buf = t.spanAttrs(ctx, (*buf)[:0], key, attempt, len(batch), o, dropped)
			span.SetAttributes(*buf...)
			clear(*buf) // keeps no key alive
			attrBufs.Put(buf)
			if failure != nil {
				span.RecordError(failure)
				span.SetStatus(codes.Error, failure.Error())
			}
			span.End()
		}
		// ctx, not hctx: a measurement in a sampled span's ctx would
		// also offer an exemplar, which costs as much again.
		if metered {
			t.duration.Record(ctx, took.Seconds(), t.outcomes[o]...)
			t.follow(key, o, attempt, len(batch))
			if o == OutcomeLeaseLost {
				t.leasesLost.Add(ctx, 1, t.addQueue...)
			}
		}
	}()
	err = h(hctx, key, batch)
	returned = true
	return err
}

// consumer is the start option of every call's span, made once: an
// option made at each call would cost an allocation.
var consumer = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}

// follow tells the blocked keys what the call's outcome o does to key.
func (t *Telemetry[K, V]) follow(key K, o Outcome, attempt, size int) {
	switch o {
	case OutcomeOK, OutcomeDropped:
		t.blocked.ended(key)
	case OutcomeRetry, OutcomeHeld:
		now := t.now()
		t.blocked.failed(key, now, attempt, size, o == OutcomeHeld, now.Add(t.retry.Delay(attempt)))
	}
}

// spanAttrs appends to attrs the attributes of a call's span, for one call
// of SetAttributes: the SDK copies them, and a span costs as much as its
// attributes.
func (t *Telemetry[K, V]) spanAttrs(ctx context.Context, attrs []attribute.KeyValue, key K, attempt, size int, o Outcome, dropped int) []attribute.KeyValue {
	fence, fenced := pacer.Fence(ctx)
	attrs = append(attrs, t.queueAttrs...)
	attrs = append(attrs, attribute.Int("pacer.attempt", attempt), attribute.Int("pacer.size", size), outcomeAttrs[o])
	if fenced {
		attrs = append(attrs, attribute.Int64("pacer.fence", int64(min(fence, 1<<63-1))))
	}
	if t.key {
		attrs = append(attrs, attribute.String("pacer.key", keyString(key)))
	}
	if dropped > 0 {
		attrs = append(attrs, attribute.Int("pacer.links.dropped", dropped))
	}
	return attrs
}

// attrBufs holds the slices of spans' attributes between calls: a
// span's implementation copies what SetAttributes gets (the SDK's, and
// otel's others, keep attributes of their own kind), so that one slice
// serves call after call where each span would allocate one.
var attrBufs = sync.Pool{New: func() any { return new([]attribute.KeyValue) }}

// outcomeAttrs are the pacer.outcome attributes, made once.
var outcomeAttrs = func() (a [outcomeCount]attribute.KeyValue) {
	for o := range Outcome(outcomeCount) {
		a[o] = attribute.String("pacer.outcome", o.String())
	}
	return a
}()
