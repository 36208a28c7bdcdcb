package pacer

import (
	"context"

	"github.com/pacerkit/pacer/internal/callctx"
)

// Carried returns, from a handler's ctx, the bytes that Config.Carry
// returned for each value of the batch when it was added, in the batch's
// order: carried[i] belongs to batch[i], and is nil for a value whose Add
// carried nothing. It returns nil for a ctx that did not come from a
// Runner with Config.Carry. The slices belong to the Runner: a handler
// must not modify them.
func Carried(ctx context.Context) [][]byte { return callctx.Carried(ctx) }
