package fifo

import "context"

// waitDrain waits for a ShutDownWithDrain: until drained closes (nil), cut
// closes because ShutDown was called meanwhile (ErrClosed), or ctx ends
// (ctx.Err()). A drain that is complete wins over the other two.
func waitDrain(ctx context.Context, drained, cut <-chan struct{}) error {
	select {
	case <-drained:
		return nil
	case <-cut:
	case <-ctx.Done():
	}
	select {
	case <-drained:
		return nil
	case <-cut:
		return ErrClosed
	default:
		return ctx.Err()
	}
}
