package pacerotel

import (
	"context"

	"github.com/pacerkit/pacer"
	"go.opentelemetry.io/otel/trace"
)

// carriedLen is the size of a span context as Carry encodes it: a version
// byte (0), the trace ID, the span ID and the trace flags.
const carriedLen = 1 + 16 + 8 + 1

// maxLinks bounds the links of a call's span, as the SDK's default span
// limits do: a batch that carries more distinct Adds links the first.
const maxLinks = 128

// Carry returns a pacer.Config.Carry that takes the span context of each
// Add's ctx to the span of the handler call that gets the value, as a
// link:
//
//	cfg.Carry = tel.Carry()
//
// A value then carries 26 bytes, or nothing when its Add's ctx has no
// span context; with a Store they are stored with it, in 28 bytes, so
// that the link reaches the span of whichever instance handles it. A
// call's span links each distinct Add of its batch, the first 128 of
// them, and counts the others in the attribute pacer.links.dropped.
// Carry returns nil while no span would record (a no-op TracerProvider,
// or otel's global one before an SDK is installed), so that the Runner
// carries nothing: install the SDK before.
func (t *Telemetry[K, V]) Carry() func(context.Context) []byte {
	if t.tracing.tracer() == nil {
		return nil
	}
	t.carrying.Store(true)
	return carry
}

// carry encodes the span context of ctx, if any.
func carry(ctx context.Context) []byte {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	b := make([]byte, carriedLen)
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(b[1:17], tid[:])
	copy(b[17:25], sid[:])
	b[25] = byte(sc.TraceFlags())
	return b
}

// links returns the links to the Adds of the batch whose handler ctx is
// ctx, each distinct span context once, at most maxLinks, and how many
// more there were.
func links(ctx context.Context) (ls []trace.Link, dropped int) {
	carried := pacer.Carried(ctx)
	if len(carried) == 0 {
		return nil, 0
	}
	// A small batch finds its repeats among the links themselves: a map
	// would cost more than it saves.
	var seen map[[24]byte]struct{}
	if len(carried) > smallBatch {
		seen = make(map[[24]byte]struct{}, min(len(carried), maxLinks))
	}
	for _, b := range carried {
		if len(b) != carriedLen || b[0] != 0 {
			continue
		}
		id := [24]byte(b[1:25])
		if seen != nil {
			if _, ok := seen[id]; ok {
				continue
			}
			seen[id] = struct{}{}
		} else if linked(ls, id) {
			continue
		}
		if len(ls) == maxLinks {
			dropped++
			continue
		}
		if ls == nil {
			ls = make([]trace.Link, 0, min(len(carried), maxLinks))
		}
		ls = append(ls, trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID:    trace.TraceID(b[1:17]),
			SpanID:     trace.SpanID(b[17:25]),
			TraceFlags: trace.TraceFlags(b[25]),
			Remote:     true,
		})})
	}
	return ls, dropped
}

// smallBatch is the most values of a batch whose repeated span contexts
// links finds without a map.
const smallBatch = 16

// linked reports whether ls links the span context whose trace ID and
// span ID are id.
func linked(ls []trace.Link, id [24]byte) bool {
	for _, l := range ls {
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		if [16]byte(id[:16]) == tid && [8]byte(id[16:]) == sid {
			return true
		}
	}
	return false
}
