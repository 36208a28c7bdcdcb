// Package instances tests, against real Redis and PostgreSQL servers, that
// a trace crosses the instances of a service sharing a store: the span of
// a handler call in one instance links the span of the Add, in another,
// whose value its batch holds. It is a module of its own, so that the
// otel module's users never download the engines' drivers.
package instances
