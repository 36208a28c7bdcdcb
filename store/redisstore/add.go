package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Add appends vals to key in one script, behind the key's earlier values;
// see store.Store. Once it returned nil the values are in Redis (as
// durable as the server's persistence makes them); an error means none of
// them was added, or, if the connection broke after the script ran, that
// all were.
func (s *Store) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	n, err := s.names(ctx, queue)
	if err != nil {
		return err
	}
	if p.Wait < 0 || p.MaxWait < 0 {
		return fmt.Errorf("redisstore: AddParams.Wait and MaxWait must be >= 0, got %v and %v", p.Wait, p.MaxWait)
	}
	if len(vals) == 0 {
		return nil
	}
	args := make([]any, 0, 4+len(vals))
	args = append(args, n.prefix, key, micros(p.Wait), maxWait(p.MaxWait))
	for _, v := range vals {
		args = append(args, v)
	}
	if err := addScript.Run(ctx, s.c, n.add(key), args...).Err(); err != nil {
		return wrap("add", err)
	}
	return nil
}

// maxWait is a MaxWait as add.lua takes it: 0 for no bound, which a
// MaxWait of for ever is too.
func maxWait(d time.Duration) int64 { return max(micros(d), 0) }
