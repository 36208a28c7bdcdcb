package main

import "github.com/pacerkit/pacer/internal/carrier"

// payload returns the bytes that a Runner's codec made of a stored value,
// for the tables and for -json: without the trace-context frame that an
// engine may keep in front of a value (see package internal/carrier).
func payload(stored []byte) []byte { return carrier.Strip(stored) }
