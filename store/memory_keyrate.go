package store

import "github.com/pacerkit/pacer/internal/timing"

var _ KeyRateClaimer = (*Memory)(nil)

// ClaimsKeyRate implements KeyRateClaimer: Memory honours
// ClaimParams.KeyRate. A key's arrival time lives on its record while it
// has one, and in its queue's tats after, until it passed.
func (m *Memory) ClaimsKeyRate() bool { return true }

// takeToken takes a token of k's bucket at now under r, which is on, and
// reports true; or, if the bucket has none, defers k until it has and
// reports false.
func (k *key) takeToken(r KeyRate, now int64) bool {
	tol := int64(r.Tolerance())
	if k.tat-now > tol {
		k.tokenAt = k.tat - tol
		return false
	}
	k.tat = timing.AddNanos(max(k.tat, now), r.Interval)
	return true
}

// forToken reports whether k is not ready at now for its KeyRate token
// alone, or that last.
func (k *key) forToken(now int64) bool {
	return k.elig && k.tokenAt > now && k.tokenAt >= max(k.place, k.next())
}

// tats holds the arrival times of the keys of a queue that went while
// their T was still ahead. Those that passed go in sweeps, each once the
// map doubled since the last: amortized O(1) an entry.
type tats struct {
	at    map[string]int64
	sweep int // the size at which the next sweep runs
}

// keepTAT keeps the arrival time of k, which goes, if it has not passed.
func (q *queue) keepTAT(k *key, now int64) {
	if k.tat <= now {
		return
	}
	t := &q.tats
	if t.at == nil {
		t.at = make(map[string]int64)
	}
	t.at[k.name] = k.tat
	if len(t.at) >= t.sweep {
		for name, at := range t.at {
			if at <= now {
				delete(t.at, name)
			}
		}
		t.sweep = 2*len(t.at) + 64
	}
}

// takeTAT returns the arrival time kept for the key name, which comes
// back, and forgets it; 0 if none is.
func (q *queue) takeTAT(name string, now int64) int64 {
	at, ok := q.tats.at[name]
	if !ok {
		return 0
	}
	delete(q.tats.at, name)
	if at <= now {
		return 0
	}
	return at
}
