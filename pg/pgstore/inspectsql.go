package pgstore

import (
	"strconv"
	"strings"

	"github.com/pacerkit/pacer/store"
)

// The statements of store.Inspector. They only read, each in one
// snapshot, and each reads a bounded number of rows through an index,
// except queueInfoSQL, which visits every key of its queue as Stats does.

// keyStateSQL is a key's store.KeyState, from its row k, at the
// statement's time: 0 for the row of a paused key without values; else
// held; else out on a lease that has not lapsed; else ready (a lapsed
// lease included); else waiting for a Retry's delay, or a Defer's, or for
// its first value's time (scheduled), or for its open burst, which is then
// all it has. A paused key's state is what
// its values are doing.
const keyStateSQL = `CASE
	WHEN k.tail = k.head AND k.lent = 0 THEN 0
	WHEN k.held THEN {held}
	WHEN k.leased_until > statement_timestamp() OR k.out_until > statement_timestamp() THEN {leased}
	WHEN k.ready_at <= statement_timestamp() THEN {ready}
	WHEN k.retrying THEN {retrying}
	WHEN k.batch > 0 THEN {deferred}
	WHEN k.tail - k.head > k.burst THEN {scheduled}
	ELSE {debouncing} END`

// keyInfoSQL are the columns that make a store.KeyInfo (scanKeyInfo) but
// its Oldest (headAddedSQL), from a key's row k and its state st.state:
//
//   - since: when it became ready, was leased or was held;
//   - until: when its lease lapses, or when it is ready, for a key that
//     waits (ready_at, which is its burst's deadline while it debounces);
//   - the attempt: the lease's (leased), the hold's (held), else that of
//     the head batch's last lease, one less than the next while retrying,
//     and 0 for a head batch not leased yet (batch 0);
//   - for a deferred key, whether a claim deferred it for its KeyRate
//     token: it is ready when the token is due, T less the tolerance
//     (in its row, else in key_rates: migration 015), which a Finish's
//     Defer leaves it at only by chance, to the microsecond.
const keyInfoSQL = `k.key, st.state,
	CASE st.state WHEN {ready} THEN k.ready_at WHEN {leased} THEN k.leased_at WHEN {held} THEN k.held_at END,
	CASE WHEN st.state IN ({leased}, {retrying}, {deferred}, {debouncing}, {scheduled}) THEN k.ready_at END,
	st.state = {debouncing} AND k.burst_capped,
	CASE WHEN k.lanes > 0 THEN (SELECT l.attempt - CASE WHEN l.retrying AND l.leased_until IS NULL THEN 1 ELSE 0 END
			FROM {schema}.lanes AS l WHERE l.queue = k.queue AND l.key_hash = k.key_hash ORDER BY l.lo LIMIT 1)
		WHEN st.state IN ({leased}, {held}) THEN k.attempt WHEN k.batch = 0 THEN 0
		WHEN k.retrying THEN k.attempt - 1 ELSE k.attempt END,
	CASE WHEN k.lanes > 0 THEN (SELECT l.fence FROM {schema}.lanes AS l
		WHERE l.queue = k.queue AND l.key_hash = k.key_hash ORDER BY l.lo LIMIT 1) ELSE k.fence END,
	CASE WHEN st.state = {leased} THEN k.holder END,
	k.error,
	k.tail - k.head + k.lent,
	k.paused,
	CASE WHEN k.lanes > 1 THEN (SELECT count(*) FROM {schema}.lanes AS l
		WHERE l.queue = k.queue AND l.key_hash = k.key_hash AND l.leased_until > statement_timestamp()) ELSE 0 END,
	CASE WHEN st.state <> {deferred} THEN false
		WHEN k.rate_t IS NOT NULL THEN k.rate_t - k.rate_tol = k.ready_at
		ELSE EXISTS (SELECT FROM {schema}.key_rates AS kr
			WHERE kr.queue = k.queue AND kr.key_hash = k.key_hash AND kr.t - kr.tol = k.ready_at) END`

// headAddedSQL is when the first value of a key of row {row} was added,
// read by the primary key: the column after keyInfoSQL's.
const headAddedSQL = `(SELECT m.added_at FROM {schema}.messages AS m
	WHERE m.queue = {row}.queue AND m.key_hash = {row}.key_hash AND m.seq = CASE WHEN {row}.lanes > 0
		THEN (SELECT min(l.lo) FROM {schema}.lanes AS l WHERE l.queue = {row}.queue AND l.key_hash = {row}.key_hash)
		ELSE {row}.head END)`

// keyInfoOneSQL is what one key is doing, after the count of the keys
// ahead of a ready key that is not paused (store.KeyInfo.Ahead): those
// before it in keys_ready, which orders the ready keys as a claim leases
// them, counted up to {maxAhead} by a LIMIT that stops the read of the
// index there; in a queue with tenants, those of the key's tenant. Then
// the count of the tenants ahead of its tenant (store.KeyInfo.TenantsAhead):
// those before it in tenants_turns, which orders the turns as pick_tenant
// takes them (by virtual time, then by name in the column's collation),
// that have a key ready and not paused, as pick_tenant asks, counted up to
// {maxAhead} by a LIMIT that stops the read of the index there. A key
// whose tenant is out of the turns (pick_tenant's NULL vtime), or that has
// no tenant in a queue with tenants (an Add that did not know of them),
// comes after every tenant in the turns; a queue without tenants has none.
//
// $1 queue, $2 key.
const keyInfoOneSQL = `
SELECT CASE WHEN st.state = {ready} AND NOT k.paused THEN (
		SELECT count(*) FROM (
			SELECT FROM {schema}.keys AS a
			WHERE a.queue = $1 AND a.ready_at < k.ready_at AND NOT a.paused
				AND a.tenant IS NOT DISTINCT FROM k.tenant
			ORDER BY a.ready_at
			LIMIT {maxAhead}
		) AS a)
	ELSE 0 END,
	CASE WHEN st.state = {ready} AND NOT k.paused THEN (
		SELECT count(*) FROM (
			SELECT FROM {schema}.tenants AS t
			WHERE t.queue = $1 AND t.vtime IS NOT NULL
				AND (t.vtime, t.tenant) < (coalesce((SELECT o.vtime FROM {schema}.tenants AS o
					WHERE o.queue = $1 AND o.tenant = k.tenant), 'infinity'::double precision), k.tenant)
				AND EXISTS (SELECT FROM {schema}.keys AS r WHERE r.queue = $1 AND r.tenant = t.tenant
					AND r.ready_at <= statement_timestamp() AND NOT r.paused)
			ORDER BY t.vtime, t.tenant
			LIMIT {maxAhead}
		) AS t)
	ELSE 0 END,
	` + keyInfoSQL + `, {headAdded:k}
FROM {schema}.keys AS k CROSS JOIN LATERAL (SELECT ` + keyStateSQL + ` AS state) AS st
WHERE k.queue = $1 AND k.key_hash = sha256($2) AND k.key = $2`

// keysPageSQL reads a page of a queue's keys in the order of the primary
// key (by the keys' SHA-256), from after a cursor. It reads at most {scan}
// rows, and returns those that match, up to a limit, and the last row it
// read if it read {scan}: n numbers the rows read, so that the caller can
// tell a page that ended because the rows did (no more pages), because
// the limit did, or because {scan} did (a page shorter than the limit,
// possibly empty, and more to read after the last row read). The outer
// LIMIT stops the read at the limit's match: a page without a filter
// reads no more rows than it returns. The outer query makes the columns
// of a KeyInfo, and reads the time of each key's first value, for the
// rows it returns only.
//
// A key matches if it has values, is in the state asked for (0: any), and
// starts with the prefix: the row of a paused key without values is read,
// and not shown. {partial} names the index of the held keys or of the
// retrying keys when the state asked for is one of those.
//
// $1 queue, $2 the hash the page starts after, $3 the state (0: any), $4
// the prefix, $5 the limit plus one.
const keysPageSQL = `
SELECT k.n, k.match, k.key_hash, ` + keyInfoSQL + `, {headAdded:k}
FROM (
	SELECT k.*, st.state,
		row_number() OVER (ORDER BY k.key_hash) AS n,
		k.tail > k.head AND ($3::integer = 0 OR st.state = $3::integer) AND substring(k.key FROM 1 FOR length($4::bytea)) = $4::bytea AS match
	FROM {schema}.keys AS k CROSS JOIN LATERAL (SELECT ` + keyStateSQL + ` AS state) AS st
	WHERE k.queue = $1 AND k.key_hash > $2::bytea{partial}
	ORDER BY k.key_hash
	LIMIT {scan}
) AS k CROSS JOIN LATERAL (SELECT k.state) AS st
WHERE k.match OR k.n = {scan}
LIMIT $5`

// valuesSQL returns up to a limit of a key's values from its head, with
// when each was added, reading them by the primary key.
//
// $1 queue, $2 key, $3 limit.
const valuesSQL = `
SELECT m.value, m.added_at
FROM {schema}.keys AS k CROSS JOIN LATERAL (
	SELECT m.value, m.added_at FROM {schema}.messages AS m
	WHERE m.queue = k.queue AND m.key_hash = k.key_hash AND m.seq < k.tail AND m.seq >= CASE WHEN k.lanes > 0
		THEN (SELECT min(l.lo) FROM {schema}.lanes AS l WHERE l.queue = k.queue AND l.key_hash = k.key_hash) ELSE k.head END
	ORDER BY m.seq
	LIMIT $3
) AS m
WHERE k.queue = $1 AND k.key_hash = sha256($2) AND k.key = $2`

// queuesSQL returns the queues that have keys or dead letters, each
// found by one read of an index from the one before (a loose index scan),
// so O(q log n) for q queues: NULL ends each list, and may come twice.
const queuesSQL = `
WITH RECURSIVE kq(queue) AS (
	(SELECT queue FROM {schema}.keys ORDER BY queue LIMIT 1)
	UNION ALL
	SELECT (SELECT k.queue FROM {schema}.keys AS k WHERE k.queue > kq.queue ORDER BY k.queue LIMIT 1)
	FROM kq WHERE kq.queue IS NOT NULL
), dq(queue) AS (
	(SELECT queue FROM {schema}.dead_letters ORDER BY queue LIMIT 1)
	UNION ALL
	SELECT (SELECT d.queue FROM {schema}.dead_letters AS d WHERE d.queue > dq.queue ORDER BY d.queue LIMIT 1)
	FROM dq WHERE dq.queue IS NOT NULL
)
SELECT queue FROM kq UNION SELECT queue FROM dq`

// queueInfoSQL is statsSQL and when the first value of the queue's first
// ready key was added, the key read from the start of keys_ready. It
// visits every key of the queue.
//
// $1 queue.
const queueInfoSQL = `
SELECT` + statsColumnsSQL + `, (
	SELECT {headAdded:f} FROM (
		SELECT queue, key_hash, head, lanes FROM {schema}.keys
		WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused
		ORDER BY ready_at
		LIMIT 1
	) AS f)
FROM {schema}.keys
WHERE queue = $1`

// keyStates fills the store's KeyState numbers into a statement.
var keyStates = strings.NewReplacer(
	"{debouncing}", strconv.Itoa(int(store.Debouncing)),
	"{ready}", strconv.Itoa(int(store.Ready)),
	"{leased}", strconv.Itoa(int(store.Leased)),
	"{retrying}", strconv.Itoa(int(store.Retrying)),
	"{held}", strconv.Itoa(int(store.Held)),
	"{deferred}", strconv.Itoa(int(store.Deferred)),
	"{scheduled}", strconv.Itoa(int(store.Scheduled)),
	"{maxAhead}", strconv.Itoa(store.MaxAhead),
	"{headAdded:k}", strings.ReplaceAll(headAddedSQL, "{row}", "k"),
	"{headAdded:r}", strings.ReplaceAll(headAddedSQL, "{row}", "r"),
	"{headAdded:f}", strings.ReplaceAll(headAddedSQL, "{row}", "f"),
)
