// Package pacerotel reports what a pacer Runner does through OpenTelemetry:
// a span per handler call, the Runner's counters and gauges through the
// OTel meter, and the keys blocked by a failing batch, the longest-blocked
// with series of their own.
//
// Wire it from one [Telemetry] per Runner:
//
//	tel, err := pacerotel.New(cfg, pacerotel.Config{})
//	if err != nil { ... }
//	cfg.OnEvent = tel.OnEvent(cfg.OnEvent) // optional: the values behind blocked keys
//	cfg.Carry = tel.Carry()                // optional: links to the Adds' spans
//	r, err := pacer.New(cfg, tel.Handler(handle))
//	if err != nil { ... }
//	reg, err := tel.Observe(r) // the gauges and counters of Runner.Stats
//	if err != nil { ... }
//	defer reg.Unregister()
//
// # Spans
//
// [Telemetry.Handler] wraps a handler so that each call runs in a span of
// kind consumer named "process QUEUE", a child of the handler's ctx, with
// the attributes:
//
//	pacer.queue    the queue (Config.Queue, by default the Runner's Name)
//	pacer.attempt  1 for a batch's first call
//	pacer.size     the number of values in the batch
//	pacer.fence    the lease's fencing token, with a Store (pacer.Fence)
//	pacer.outcome  what the Runner does with the batch (see Outcome)
//	pacer.key      the key, only with Config.Key
//
// A call that fails records its error on the span (an exception event) and
// sets the span's status to Error, as the OTel conventions ask. With
// [Telemetry.Carry] giving the Runner's Config.Carry, the span links the spans
// of the Adds whose values its batch holds, in whichever instance added them:
// with a Store, the span context is stored with each value.
//
// # Metrics
//
// Every instrument carries the pacer.queue attribute (when the queue has a
// name). From Runner.Stats, read by [Telemetry.Observe] at each collection:
//
//	pacer.values.received, .handled, .dropped, .refused   counters {value}
//	pacer.batches, pacer.batches.retried, pacer.reruns    counters {batch}
//	pacer.rate_limit.wait                                 counter, s
//	pacer.values, pacer.queued, pacer.blocked.values      gauges {value}
//	pacer.in_flight, pacer.dead                           gauges {batch}
//	pacer.pending, pacer.retrying, pacer.held             gauges {key}
//	pacer.blocked.keys                                    gauge {key}: retrying + held
//	pacer.debounce                                        gauge, s
//
// From the handler wrapper: pacer.batch.duration (histogram, s, with
// pacer.outcome), pacer.leases.lost (counter), and the keys blocked by a
// failing batch (retrying or held), as Hook0 watches its FIFO
// subscriptions:
//
//	pacer.blocked.oldest.age       gauge, s: how long the longest-blocked key has been blocked
//	pacer.blocked.oldest.attempt   gauge: the attempt of its last failed call
//	pacer.key.blocked.age          gauge, s, per key (pacer.key, pacer.state)
//	pacer.key.blocked.attempt      gauge, per key
//	pacer.key.blocked.values       gauge {value}, per key: the batch, and with OnEvent the values behind it
//
// The per-key series exist only for the Config.BlockedKeys longest-blocked
// keys (5 by default), so the number of series stays bounded whatever the
// number of keys.
//
// # Cost
//
// Nothing is measured or traced while the providers record nothing:
// [Telemetry.Handler] returns the handler itself for otel's no-op
// providers ([go.opentelemetry.io/otel/trace/noop.NewTracerProvider],
// [go.opentelemetry.io/otel/metric/noop.NewMeterProvider]), and with the
// global providers of package otel before an SDK is installed a call checks
// two atomic values and goes straight to the handler.
// [Telemetry.OnEvent] makes the Runner time every step it reports, which
// costs it more than the rest of the Telemetry: wire it only for the values
// behind the blocked keys. It returns the next function unchanged when the
// meter records nothing when it is called, so install the SDK first.
// Figures: BENCHMARKS.md at the repository root.
package pacerotel
