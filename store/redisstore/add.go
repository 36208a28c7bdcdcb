package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Add appends vals to key in one script, behind the key's earlier values;
// see store.Store. The script only appends them, stamped with the
// server's time, to the queue's inbox; the next script that looks at the
// queue folds them into the key as of that time. Once Add returned nil the
// values are in Redis (as durable as the server's persistence makes
// them); an error means none of them was added, or, if the connection
// broke after the script ran, that all were.
func (s *Store) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return err
	}
	if p.Wait < 0 || p.MaxWait < 0 {
		return fmt.Errorf("redisstore: AddParams.Wait and MaxWait must be >= 0, got %v and %v", p.Wait, p.MaxWait)
	}
	if len(vals) == 0 {
		return nil
	}
	args := make([]any, 2, 2+len(vals))
	args[0], args[1] = addParams(len(vals), p), key
	for _, v := range vals {
		args = append(args, v)
	}
	if err := s.call(ctx, addFn, q.add, args...).Err(); err != nil {
		return wrap("add", err)
	}
	return nil
}

// addParams is ARGV[1] of add.lua for n values added with p: "<n>" with a
// Wait of 0, else "<n> <wait> <maxwait>".
func addParams(n int, p store.AddParams) string {
	if p.Wait == 0 {
		if n == 1 {
			return "1"
		}
		return strconv.Itoa(n)
	}
	b := make([]byte, 0, 48)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, micros(p.Wait), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, maxWait(p.MaxWait), 10)
	return string(b)
}

// maxWait is a MaxWait as add.lua takes it: 0 for no bound, which a
// MaxWait of for ever is too.
func maxWait(d time.Duration) int64 { return max(micros(d), 0) }
