package pgstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pacerkit/pacer/store"
)

var _ store.Inspector = (*Store)(nil)

// The inspection statements that read a bounded number of rows are
// planned at each call (pgx's QueryExecModeExec, which prepares no
// statement): they are rare, and a plan that PostgreSQL kept from the time
// a queue was small could read a large queue whole (see Plans in the
// package doc), where a plan made for the call reads the queue's current
// size from the table. Queues' counts, which visit every key of a queue
// whatever their plan, are prepared as Stats's are.
const inspectMode = pgx.QueryExecModeExec

// Queues implements store.Inspector: one statement finds the queues with
// keys or dead letters, O(q log n) for q queues, and then one statement
// per queue, sent together, counts it as Stats does, visiting every key of
// the queue.
func (s *Store) Queues(ctx context.Context) ([]store.QueueInfo, error) {
	if err := s.begin(ctx, ""); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q.queues, inspectMode)
	if err != nil {
		return nil, failed(ctx, "Queues", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[pgtype.Text])
	if err != nil {
		return nil, failed(ctx, "Queues", err)
	}
	var (
		b   pgx.Batch
		out []store.QueueInfo
	)
	for _, name := range names {
		if !name.Valid {
			continue // the end of one of the lists
		}
		out = append(out, store.QueueInfo{Name: name.String})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := range out {
		q := &out[i]
		b.Queue(s.q.queueInfo, q.Name).QueryRow(func(row pgx.Row) error {
			var oldest pgtype.Timestamptz
			st := &q.Stats
			if err := row.Scan(&st.Values, &st.Keys, &st.Ready, &st.Pending, &st.Leased,
				&st.Retrying, &st.Behind, &st.Held, &st.HeldValues, &st.Dead, &st.PausedKeys, &st.Paused, &oldest); err != nil {
				return err
			}
			q.Oldest = timeOf(oldest)
			return nil
		})
	}
	if len(out) == 0 {
		return nil, nil
	}
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return nil, failed(ctx, "Queues", err)
	}
	// A queue whose only key rows are those of paused keys without
	// values holds nothing.
	return slices.DeleteFunc(out, func(q store.QueueInfo) bool { return q.Stats.Keys == 0 && q.Stats.Dead == 0 }), nil
}

// Key implements store.Inspector: one statement, which reads the key's row
// by its primary key, and, for a ready key that is not paused, counts the
// keys ahead of it in the ready order up to store.MaxAhead: O(log n +
// min(ahead, MaxAhead)); with tenants, it counts the tenants ahead of its
// tenant in the turns up to store.MaxAhead too, with one probe of
// keys_tenant_ready each (O(log n), plus the paused keys at the front of
// the tenant's ready keys), for those counted and those passed over that
// have no key ready (as a Claim's pick_tenant passes over them).
func (s *Store) Key(ctx context.Context, queue, key string) (store.KeyInfo, bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return store.KeyInfo{}, false, err
	}
	rows, err := s.pool.Query(ctx, s.q.keyInfo, inspectMode, queue, bytesOf(key))
	if err != nil {
		return store.KeyInfo{}, false, failed(ctx, "Key", err)
	}
	defer rows.Close()
	var (
		info           store.KeyInfo
		ahead, tenants int
		found          = rows.Next()
	)
	if found {
		if info, err = scanKeyInfo(rows, &ahead, &tenants); err != nil {
			return store.KeyInfo{}, false, failed(ctx, "Key", err)
		}
		info.Ahead, info.TenantsAhead = ahead, tenants
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.KeyInfo{}, false, failed(ctx, "Key", err)
	}
	return info, found, nil
}

// Values implements store.Inspector: one statement, which reads the key's
// row and then its first limit values, by their primary keys. A limit
// below 1 returns none.
func (s *Store) Values(ctx context.Context, queue, key string, limit int) ([]store.StoredValue, error) {
	if err := s.begin(ctx, queue); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.q.values, inspectMode, queue, bytesOf(key), int64(limit))
	if err != nil {
		return nil, failed(ctx, "Values", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.StoredValue, error) {
		var v store.StoredValue
		err := row.Scan(&v.Value, &v.Added)
		return v, err
	})
	if err != nil {
		return nil, failed(ctx, "Values", err)
	}
	return out, nil
}

// scanKeyInfo reads the columns of keyInfoSQL and headAddedSQL from row,
// and the columns before them into head (nil skips one).
func scanKeyInfo(row pgx.Row, head ...any) (store.KeyInfo, error) {
	var (
		info                 store.KeyInfo
		key, holder, why     []byte
		state                int32
		since, until, oldest pgtype.Timestamptz
		values, leases       int64
	)
	dst := append(head, &key, &state, &since, &until, &info.MaxWait, &info.Attempt,
		&info.Fence, &holder, &why, &values, &info.Paused, &leases, &info.ForToken, &oldest)
	if err := row.Scan(dst...); err != nil {
		return store.KeyInfo{}, err
	}
	info.Key, info.State = string(key), store.KeyState(state)
	info.Since, info.Until, info.Oldest = timeOf(since), timeOf(until), timeOf(oldest)
	info.Holder, info.Err = string(holder), string(why)
	info.Values = int(values)
	if leases > 1 {
		info.Leases = int(leases)
	}
	return info, nil
}

// timeOf returns t as a time, zero for NULL and for a time that never
// comes ('infinity').
func timeOf(t pgtype.Timestamptz) time.Time {
	if !t.Valid || t.InfinityModifier != pgtype.Finite {
		return time.Time{}
	}
	return t.Time
}
