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
// broke after the script ran, that all were. The script counts the
// queue's values as it appends them, in the queue's hash, so that
// p.MaxValues is checked in the same step, against the values of every
// process, at the cost of one more command per Add. The first Add of a
// queue in a process first puts its name in the Store's list of queues
// (see Queues), in a command of its own.
func (s *Store) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return err
	}
	if p.Wait < 0 || p.MaxWait < 0 || p.MaxValues < 0 {
		return fmt.Errorf("redisstore: AddParams.Wait, MaxWait and MaxValues must be >= 0, got %v, %v and %d", p.Wait, p.MaxWait, p.MaxValues)
	}
	if err := p.ValidateDelay(); err != nil {
		return err
	}
	if err := store.ValidateTenant(p); err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if err := s.list(ctx, q, "add"); err != nil {
		return err
	}
	args := make([]any, 3, 3+len(vals))
	args[0], args[1], args[2] = "0", addParams(len(vals), p), key
	if p.MaxValues > 0 {
		args[0] = strconv.Itoa(p.MaxValues)
	}
	for _, v := range vals {
		args = append(args, v)
	}
	stored, err := s.call(ctx, addFn, q.add, args...).Int()
	if err != nil {
		return wrap("add", err)
	}
	if stored == 0 {
		return store.ErrFull
	}
	return nil
}

// addParams is ARGV[1] of add.lua for n values added with p: "<n>" with a
// Wait of 0, no Delay and no Tenant, "<n> @<delay>" with a Delay, else
// "<n> <wait> <maxwait>"; then " <weight> <tenant>" with a Tenant.
func addParams(n int, p store.AddParams) string {
	if p.Delay > 0 {
		b := make([]byte, 0, 32)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ' ', '@')
		b = strconv.AppendInt(b, micros(p.Delay), 10)
		return string(appendTenant(b, p))
	}
	if p.Wait == 0 && p.Tenant == "" {
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
	return string(appendTenant(b, p))
}

// appendTenant appends " <weight> <tenant>" to b for an Add with a Tenant.
func appendTenant(b []byte, p store.AddParams) []byte {
	if p.Tenant == "" {
		return b
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(p.Weight), 10)
	b = append(b, ' ')
	return append(b, p.Tenant...)
}

// maxWait is a MaxWait as add.lua takes it: 0 for no bound, which a
// MaxWait of for ever is too.
func maxWait(d time.Duration) int64 { return max(micros(d), 0) }

var _ store.FairTenants = (*Store)(nil)

// FairTenants implements store.FairTenants: see Tenants in the package
// doc.
func (s *Store) FairTenants() {}
