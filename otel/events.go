package pacerotel

import (
	"context"

	"github.com/pacerkit/pacer"
)

// OnEvent returns a function for pacer.Config.OnEvent that tells the
// blocked keys what the handler wrapper cannot see: the values queued
// behind a failing batch (in pacer.key.blocked.values) and when its retry
// comes due. It then calls next, when not nil, with every event:
//
//	cfg.OnEvent = tel.OnEvent(cfg.OnEvent)
//
// It is optional: [Telemetry.Handler] alone follows the keys that block.
// It takes O(1) per event, and a mutex only for the events of a failing
// batch or while some key is blocked. A Runner with OnEvent set reads its
// clock at every step it reports, which costs it more than the events
// themselves (BENCHMARKS.md). OnEvent returns next itself when the
// MeterProvider records nothing at the time of the call (otel's global one
// before an SDK is installed, or a no-op), so install the SDK before.
func (t *Telemetry[K, V]) OnEvent(next func(pacer.Event[K])) func(pacer.Event[K]) {
	if t.meterOff || !t.duration.Enabled(context.Background()) {
		return next
	}
	if next == nil {
		return t.blocked.event
	}
	return func(e pacer.Event[K]) {
		t.blocked.event(e)
		next(e)
	}
}
