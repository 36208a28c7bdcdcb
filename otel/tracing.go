package pacerotel

import (
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracing finds the tracer of a call: the Config's provider's, or the
// global provider's as it is at the call, and nil when the provider is a
// no-op, so that a call pays for no span that nobody records.
type tracing struct {
	fixed  bool // Config.TracerProvider was set: cached never changes
	name   string
	cached atomic.Pointer[tracerOf]
}

// tracerOf is the tracer of one provider, nil for a no-op.
type tracerOf struct {
	p   trace.TracerProvider
	t   trace.Tracer
	cmp bool // p's type is comparable: == on it cannot panic
}

// init sets t up for p, or for the global provider when p is nil.
func (t *tracing) init(p trace.TracerProvider, spanName string) {
	t.fixed, t.name = p != nil, spanName
	if p == nil {
		p = otel.GetTracerProvider()
	}
	t.cached.Store(resolve(p))
}

// tracer returns the tracer of the call, or nil when no span would record.
// It costs an atomic load, and one of the global provider when the
// Config set none.
func (t *tracing) tracer() trace.Tracer {
	c := t.cached.Load()
	if t.fixed {
		return c.t
	}
	if p := otel.GetTracerProvider(); !c.cmp || p != c.p {
		// otel.SetTracerProvider was called since: the next calls use it.
		c = resolve(p)
		t.cached.Store(c)
	}
	return c.t
}

// off reports whether the tracer is a no-op for good.
func (t *tracing) off() bool { return t.fixed && t.cached.Load().t == nil }

func resolve(p trace.TracerProvider) *tracerOf {
	c := &tracerOf{p: p, cmp: reflect.TypeOf(p).Comparable()}
	if !isNoop(p) {
		c.t = p.Tracer(scope)
	}
	return c
}

// globalDefault is the package of the provider otel.GetTracerProvider
// returns before otel.SetTracerProvider is called: its spans record
// nothing until then, and otel exports no way to tell it apart.
const globalDefault = "go.opentelemetry.io/otel/internal/global"

var noopTypes = []reflect.Type{
	reflect.TypeFor[noop.TracerProvider](),
	//lint:ignore SA1019 the deprecated no-op is still a no-op
	reflect.TypeOf(trace.NewNoopTracerProvider()),
}

// isNoop reports whether p's spans never record: one of otel's no-op
// providers, or its global one before an SDK is installed.
func isNoop(p trace.TracerProvider) bool {
	typ := reflect.TypeOf(p)
	for _, n := range noopTypes {
		if typ == n {
			return true
		}
	}
	return typ.Kind() == reflect.Pointer && typ.Elem().PkgPath() == globalDefault
}
