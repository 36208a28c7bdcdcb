package console

import "github.com/pacerkit/pacer/internal/carrier"

// stripTrace returns the payload of a stored value without the
// trace-context frame that an engine may keep in front of it (see package
// internal/carrier), so that a page shows what was added.
func stripTrace(stored []byte) []byte { return carrier.Strip(stored) }
