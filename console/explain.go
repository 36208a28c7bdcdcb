package console

import (
	"context"
	"errors"

	"github.com/pacerkit/pacer"
)

// errNoExplain is why a queue without a Runner cannot be explained by a
// store without an Inspector.
var errNoExplain = errors.New("this store does not implement store.Inspector and the queue has no Runner: nothing can explain the key")

// explain returns the sentence that says why key of queue is where it
// is: its Runner's Explain, which knows the Runner's own limits, or else
// pacer.ExplainStored, which reads the engine's state alone.
func (c *console) explain(ctx context.Context, queue, key string) (string, error) {
	if rv, ok := c.runners[queue]; ok {
		ex, err := rv.Explain(ctx, key)
		if err != nil {
			return "", err
		}
		return ex.String(), nil
	}
	if c.insp == nil {
		return "", errNoExplain
	}
	ex, err := pacer.ExplainStored(ctx, c.insp, queue, key)
	if err != nil {
		return "", err
	}
	return ex.String(), nil
}
