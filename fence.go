package pacer

import (
	"context"

	"github.com/pacerkit/pacer/internal/callctx"
)

// Fence returns the fencing token of the lease under which a handler runs,
// from the handler's ctx. With a Config.Store every lease of a key carries
// a token larger than any earlier lease of that key, in every process
// sharing the store: a handler passes it along with its own writes (a
// conditional UPDATE ... WHERE fence < $1, a compare in a script) so that
// the writes of a holder whose lease lapsed, and whose ctx was cancelled
// with ErrLeaseLost, are refused.
//
// ok is false, and the token 0, for a ctx that did not come from a Runner
// with a Store. A Runner without a Store needs no fence: its leases never
// lapse, and a counter in the process would start over with it, which a
// downstream check could not tell from a stale holder.
func Fence(ctx context.Context) (fence uint64, ok bool) { return callctx.Fence(ctx) }
