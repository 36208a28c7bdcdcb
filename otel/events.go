package pacerotel

import (
	"context"

	"github.com/pacerkit/pacer"
)

// OnEvent returns a function for pacer.Config.OnEvent that follows the
// keys blocked by a failing batch, for the pacer.blocked.oldest.* and
// pacer.key.blocked.* gauges, then calls next, when not nil, with every
// event:
//
//	cfg.OnEvent = tel.OnEvent(cfg.OnEvent)
//
// It follows at most 10,000 keys at once, in O(1) per event, under a
// mutex. A Runner with OnEvent set reads its clock at every step it
// reports: OnEvent returns next itself when the MeterProvider records
// nothing at the time of the call (otel's global one before an SDK is
// installed, or a no-op), so install the SDK before.
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
