package store

import "sort"

// keyOrder holds a queue's keys in the order their records were created,
// which is the order of the pages of Keys: a key that holds values all
// along keeps its record, and so its place, while others come and go. A
// key that empties and comes back gets a new record, at the end.
//
// The entries are a slice in the order of their seq, appended to; a
// removed key leaves a tombstone, and the slice is compacted when
// tombstones are more than half of it, so that it holds at most twice the
// keys and each removal pays O(1) of compaction on average. A Fenwick tree
// counts the live entries, so that a page skips a run of tombstones, which
// the keys leased and acked first leave at the front, in O(log n).
type keyOrder struct {
	entries []orderEntry
	live    fenwick // 1 per live entry, 0 per tombstone
	n       int     // live entries
	last    uint64  // the last seq given out
}

// orderEntry is a key record and its seq; k is nil once the key is
// removed.
type orderEntry struct {
	seq uint64
	k   *key
}

// add gives k, a new record, the next seq and puts it at the end: O(log n).
func (o *keyOrder) add(k *key) {
	o.last++
	k.seq = o.last
	o.entries = append(o.entries, orderEntry{seq: k.seq, k: k})
	o.live.push(1)
	o.n++
}

// remove leaves a tombstone for k: O(log n), and a compaction now and then.
func (o *keyOrder) remove(k *key) {
	i := o.after(k.seq - 1)
	o.entries[i].k = nil
	o.live.add(i, -1)
	o.n--
	if gone := len(o.entries) - o.n; gone > len(o.entries)/2 {
		o.compact()
	}
}

// compact drops the tombstones into a new slice (letting the old one go).
func (o *keyOrder) compact() {
	kept := make([]orderEntry, 0, o.n)
	for _, e := range o.entries {
		if e.k != nil {
			kept = append(kept, e)
		}
	}
	o.entries = kept
	o.live = newFenwickOfOnes(len(kept))
}

// after returns the index of the first entry whose seq is above seq (live
// or not), len(entries) if none: O(log n).
func (o *keyOrder) after(seq uint64) int {
	return sort.Search(len(o.entries), func(i int) bool { return o.entries[i].seq > seq })
}

// next returns the index of the first live entry at i or after,
// len(entries) if none: O(1) when entry i is live, else O(log n).
func (o *keyOrder) next(i int) int {
	if i >= len(o.entries) || o.entries[i].k != nil {
		return min(i, len(o.entries))
	}
	before := o.live.sum(i)
	if before == o.n {
		return len(o.entries)
	}
	return o.live.find(before + 1)
}
