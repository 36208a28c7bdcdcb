package pgstore

import (
	"strconv"
	"strings"
)

// The statements of the store, one per operation, each one round trip and
// one implicit transaction (FinishAndClaim runs a finish statement and the
// claim statement in one transaction, and a flight of Acks runs
// finishAcksSQL and the claim statement in one). {schema} stands for the
// store's quoted schema.
//
// Time is the server's: every statement reads statement_timestamp() (the
// same instant throughout the statement; inside a caller's transaction, the
// time of the statement, not of the transaction's start). Durations come in
// as intervals, NULL for a delay that never ends, which becomes 'infinity'.
//
// The statements that make a key ready sooner say so, and the Store then
// notifies the queue's channel once the statement committed (see
// notifier): not in the statement, since a transaction that notifies holds
// a lock of the whole cluster while it commits. Only the Add of AddTx
// notifies itself, since only PostgreSQL knows when the caller's
// transaction commits.
//
// A key's row is found by (queue, key_hash), its primary key, where
// key_hash is sha256(key): an index entry of bounded size whatever the
// key's length. A statement that looks up the caller's key compares the
// key too, so that it never takes one key's row for another's; one that
// follows a row it found already uses the hash alone. Messages name their
// key by its hash.
//
// A statement reads with the snapshot taken when it began, but the row it
// locks is the row's latest version, which a concurrent Add may have
// changed since. So the statements that lock a key row and then write it
// decide from the locked version (selected FOR UPDATE first, in a
// MATERIALIZED CTE), and Claim reads no value past the tail its snapshot
// sees.

// A queue's count of stored values, for store.AddParams.MaxValues, is the
// sum of its rows in counts, over slots that spread the writes so that no
// row of it becomes a point where every Add and Ack of the queue waits for
// the commit of the one before (see migration 002):
//
//   - 0 to addSlots-1: the values added by Adds without a bound, which
//     take the slots in turn (per Store, from a random one), and by AddTx
//     and Redrive, each session in slot pg_backend_pid() % addSlots, so
//     that a transaction's AddTx statements share one. Statements of a
//     slot take turns; the others do not wait.
//   - boundSlot: the values added by bounded Adds.
//   - removeSlot to removeSlot+addSlots-1: minus the values acked and
//     dropped, each session in its own slot again.
//
// A bounded Add (countAddSQL) locks slots 0 to boundSlot, in order,
// reading their latest values, so that no Add can commit values that it
// does not count; it reads the slots of removals in its snapshot, so an
// Ack that commits meanwhile only leaves the count higher than it is, for
// this Add. Bounded Adds of a queue thus take turns, and an Add without a
// bound waits for one in its slot. Every statement that counts locks its
// slots before the key row, so that a transaction that holds a slot (an
// AddTx's) and waits for a key row never waits for a statement that holds
// that key row and waits for the slot.
const (
	addSlots   = 32
	boundSlot  = addSlots
	removeSlot = boundSlot + 1
)

// queries holds the statements with the schema filled in.
type queries struct {
	addReady, addBurst, addDelayed, claim            string
	claimShared, extend                              string
	finishAck, finishDrop, finishRetry, finishHold   string
	finishAcks                                       string
	release, upcoming, stats, notify                 string
	deadLetters, redrive, purge                      string
	queues, queueInfo, keyInfo, values, keysPage     string // inspectsql.go
	pauseQueue, resumeQueue, pauseKey, resumeKey     string // operatesql.go
	queuePaused                                      string
	retryNow, lockKey, dropKey                       string
	claimLanes, finishLane, extendLane, releaseLanes string // lanes.go
	foldLanes, retryLanes                            string
	finishLanes, claimLanesShared                    string
	claimLanesFair, claimLanesFairShared             string
	// The claims with a KeyRate (keyrate.go, migration 015).
	claimRated, claimSharedRated, sweepRates       string
	claimLanesRated, claimLanesSharedRated         string
	claimLanesFairRated, claimLanesFairSharedRated string
}

// newQueries fills schema, quoted already, into the statements.
func newQueries(schema string) queries {
	r := strings.NewReplacer("{schema}", schema, "{isScheduled}", scheduledSQL, "{addSlots}", strconv.Itoa(addSlots),
		"{boundSlot}", strconv.Itoa(boundSlot), "{removeSlot}", strconv.Itoa(removeSlot))
	// running fills in runningSQL for the queue named by queue.
	running := func(sql, queue string) string {
		return strings.ReplaceAll(sql, "{running}", strings.ReplaceAll(runningSQL, "{queue}", queue))
	}
	q := queries{
		addReady:             strings.NewReplacer("{bound}", "$6", "{slot}", "$7").Replace(r.Replace(addReadySQL)),
		addBurst:             strings.NewReplacer("{bound}", "$8", "{slot}", "$9").Replace(r.Replace(addBurstSQL)),
		addDelayed:           strings.NewReplacer("{bound}", "$7", "{slot}", "$8").Replace(r.Replace(addDelayedSQL)),
		claim:                strings.NewReplacer("{take}", "picked", "{floor}", claimFloorSQL).Replace(r.Replace(running(claimSQL, "$1"))),
		claimShared:          strings.NewReplacer("{take}", claimSharedTake, "{floor}", claimFloorSQL).Replace(r.Replace(running(claimSQL, "$1"))),
		extend:               r.Replace(extendSQL),
		finishAck:            r.Replace(finishAckSQL),
		finishDrop:           r.Replace(finishDropSQL),
		finishRetry:          r.Replace(finishRetrySQL),
		finishHold:           r.Replace(finishHoldSQL),
		finishAcks:           r.Replace(finishAcksSQL),
		release:              r.Replace(releaseSQL),
		notify:               notifySQL,
		upcoming:             r.Replace(running(upcomingSQL, "q.queue")),
		stats:                r.Replace(running(statsSQL, "$1")),
		deadLetters:          r.Replace(deadLettersSQL),
		redrive:              r.Replace(redriveSQL),
		purge:                r.Replace(purgeSQL),
		queues:               r.Replace(queuesSQL),
		queueInfo:            r.Replace(running(keyStates.Replace(queueInfoSQL), "$1")),
		keyInfo:              r.Replace(keyStates.Replace(keyInfoOneSQL)),
		values:               r.Replace(valuesSQL),
		keysPage:             r.Replace(keyStates.Replace(keysPageSQL)),
		pauseQueue:           r.Replace(pauseQueueSQL),
		resumeQueue:          r.Replace(resumeQueueSQL),
		queuePaused:          r.Replace(running(queuePausedSQL, "$1")),
		pauseKey:             r.Replace(pauseKeySQL),
		resumeKey:            r.Replace(resumeKeySQL),
		retryNow:             r.Replace(retryNowSQL),
		lockKey:              r.Replace(lockKeySQL),
		dropKey:              r.Replace(dropKeySQL),
		claimLanes:           r.Replace(claimLanesSQL),
		finishLane:           r.Replace(finishLaneSQL),
		extendLane:           r.Replace(extendLaneSQL),
		releaseLanes:         r.Replace(releaseLanesSQL),
		foldLanes:            r.Replace(foldLanesSQL),
		retryLanes:           r.Replace(retryLanesSQL),
		finishLanes:          r.Replace(finishLanesSQL),
		claimLanesShared:     r.Replace(claimLanesSharedSQL),
		claimLanesFair:       r.Replace(claimLanesFairSQL),
		claimLanesFairShared: r.Replace(claimLanesFairSharedSQL),

		sweepRates:                r.Replace(sweepSQL),
		claimLanesRated:           r.Replace(claimLanesRatedSQL),
		claimLanesSharedRated:     r.Replace(claimLanesSharedRatedSQL),
		claimLanesFairRated:       r.Replace(claimLanesFairRatedSQL),
		claimLanesFairSharedRated: r.Replace(claimLanesFairSharedRatedSQL),
	}
	pick := r.Replace(claimPickSQL)
	q.claimRated = rateClaim(schema, mustReplace(q.claim, pick, ratedPick(schema, false)))
	q.claimSharedRated = rateClaim(schema, mustReplace(q.claimShared, pick, ratedPick(schema, false)))
	return q
}

// countAddSQL opens the statements of an Add: it counts the Add's values
// in the queue's count, and counted has a row if and only if it did. With
// a bound it counts them only if the queue then stores at most that many
// values, in slot boundSlot; without one, in slot {slot}, or the
// session's. The statements add the values only with counted's row, so
// all or nothing (but see refusedSQL).
//
// $1 queue, $3 values (bytea[]), {bound} the bound (bigint, NULL: none),
// {slot} the slot (integer, NULL: the session's).
const countAddSQL = `
WITH added AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT $1, s, 0 FROM generate_series(0, {addSlots} - 1) AS s
	WHERE {bound}::bigint IS NOT NULL
	ORDER BY s
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n
	RETURNING c.n
), room AS (
	SELECT CASE WHEN {bound}::bigint IS NOT NULL THEN {bound}::bigint
		- (SELECT coalesce(sum(n), 0) FROM added)
		- (SELECT coalesce(sum(n), 0) FROM {schema}.counts WHERE queue = $1 AND slot >= {removeSlot})
	END AS n
), counted AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT $1, CASE WHEN room.n IS NULL THEN coalesce({slot}::integer, pg_backend_pid() % {addSlots}) ELSE {boundSlot} END,
		cardinality($3::bytea[])
	FROM room
	WHERE room.n IS NULL OR cardinality($3::bytea[]) <= room.n
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
	WHERE {bound}::bigint IS NULL OR c.n + EXCLUDED.n <= (SELECT n FROM room)
	RETURNING 1
)`

// refusedSQL closes the statements of an Add, after the key row's insert
// (k) and the values' (m): if the key row is another key's, one of the
// queue with the same SHA-256, which has values, the insert's ON CONFLICT
// leaves it as it was and returns no row, and the statement adds nothing;
// refusedSQL then takes the values that countAddSQL counted back off the
// count, in the session's slot of removals (the statement wrote the slot
// it counted in already), and refused has a row. It locks that slot after
// the key row, against the order above, so a refusal may meet a deadlock,
// which PostgreSQL ends with an error: it takes a key of the same SHA-256.
//
// $1 queue, $3 values (bytea[]).
const refusedSQL = `, refused AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT $1, {removeSlot} + pg_backend_pid() % {addSlots}, -cardinality($3::bytea[])
	FROM counted
	WHERE NOT EXISTS (SELECT FROM k)
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
	RETURNING 1
)`

// uncountSQL takes the values of the batches that removeBatchSQL removes
// (k's, of one queue) off the queue's count, in the session's slot of
// removals.
const uncountSQL = `, uncounted AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT k.queue, {removeSlot} + pg_backend_pid() % {addSlots}, -sum(k.batch) FROM k
	GROUP BY k.queue
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
)`

// scheduledSQL says that an idle key k, whose head batch is not fixed,
// keeps its place in the ready order whatever is added behind: its gate
// has not passed, so it may wait for its first value's time, and it has
// values before its open burst. It is false, at the cost of a comparison,
// for a key without a delayed value.
const scheduledSQL = `coalesce(k.gate > statement_timestamp()
	AND k.tail - k.head > CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END, false)`

// addReadySQL appends values to a key, ready at once, ending its open burst.
// A key that is leased, held, waiting for a delay, scheduled or ready
// already keeps its place in the ready order; any other is ready now. It returns one row:
// whether the key became ready now, and then notifies if given a channel;
// whether it added the values; and whether it refused them because
// another key of the queue with the same SHA-256 has values (refusedSQL).
//
// It counts the values first (countAddSQL), and adds nothing if its bound
// refused them.
//
// $1 queue, $2 key, $3 values (bytea[]), $4 channel (NULL: none), $5
// payload, $6 bound (NULL: none), $7 slot (NULL: the session's).
const addReadySQL = countAddSQL + `, k AS (
	INSERT INTO {schema}.keys AS k (queue, key_hash, key, tail, ready_at)
	SELECT $1, sha256($2), $2, cardinality($3::bytea[]), statement_timestamp() FROM counted
	ON CONFLICT (queue, key_hash) DO UPDATE SET
		tail = k.tail + EXCLUDED.tail,
		burst = 0,
		ready_at = CASE WHEN k.leased_until IS NULL AND NOT k.held AND k.batch = 0 AND NOT {isScheduled}
			THEN least(k.ready_at, EXCLUDED.ready_at) ELSE k.ready_at END
	WHERE k.key = EXCLUDED.key
	RETURNING k.key_hash, k.tail, k.ready_at
), m AS (
	INSERT INTO {schema}.messages (queue, key_hash, seq, value, added_at)
	SELECT $1, k.key_hash, k.tail - cardinality($3::bytea[]) + v.i - 1, v.value, statement_timestamp()
	FROM k, unnest($3::bytea[]) WITH ORDINALITY AS v(value, i)
)` + refusedSQL + `
SELECT coalesce(w.woke, false), CASE WHEN w.woke AND $4::text IS NOT NULL THEN pg_notify($4, $5) END,
	w.woke IS NOT NULL, EXISTS (SELECT FROM refused)
FROM (VALUES (1)) AS one(x)
LEFT JOIN (k CROSS JOIN LATERAL (SELECT coalesce(k.ready_at = statement_timestamp(), false) AS woke) w) ON true`

// addBurstSQL appends values to a key's open burst, or opens one: the burst
// is due at min(now+wait, first+max_wait) (burst_capped: the latter, when
// it comes first), and its values are ready from then on. A key that is
// leased, held, waiting for a delay or ready already keeps its place in
// the ready order; any other is ready when the burst is due. It returns
// one row: whether the key became ready now or a burst opened on an idle
// key, which may be due before what a Wait sleeps for, and then notifies
// if given a channel; whether it added the values; and whether it refused
// them because another key of the queue with the same SHA-256 has values
// (refusedSQL). It counts the values first (countAddSQL), and adds nothing
// if its bound refused them.
//
// $1 queue, $2 key, $3 values (bytea[]), $4 wait (> 0; NULL: never), $5
// max_wait (NULL: no bound), $6 channel (NULL: none), $7 payload, $8
// bound (NULL: none), $9 slot (NULL: the session's).
const addBurstSQL = countAddSQL + `, k AS (
	INSERT INTO {schema}.keys AS k (queue, key_hash, key, tail, burst, burst_first, burst_due, burst_capped, ready_at)
	SELECT $1, sha256($2), $2, c.n, c.n, statement_timestamp(), c.due, c.capped, c.due
	FROM counted, (SELECT cardinality($3::bytea[]) AS n,
		coalesce(least(statement_timestamp() + $4::interval, statement_timestamp() + $5::interval), 'infinity') AS due,
		coalesce($5::interval < $4::interval, $5::interval IS NOT NULL) AS capped) c
	ON CONFLICT (queue, key_hash) DO UPDATE SET (tail, burst, burst_first, burst_due, burst_capped, ready_at) = (
		SELECT k.tail + EXCLUDED.tail,
			CASE WHEN d.due <= statement_timestamp() THEN 0 ELSE o.open + EXCLUDED.tail END,
			f.first,
			d.due,
			d.capped,
			CASE WHEN k.leased_until IS NOT NULL OR k.held OR k.batch > 0 OR k.tail - k.head > o.open
				THEN k.ready_at
				WHEN d.due <= statement_timestamp() THEN statement_timestamp()
				-- A key of lanes keeps its place if sooner: when a lane lapses.
				ELSE least(d.due, CASE WHEN k.lanes > 0 THEN k.ready_at END) END
		FROM (SELECT CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END AS open) o,
		LATERAL (SELECT CASE WHEN o.open = 0 THEN statement_timestamp() ELSE k.burst_first END AS first) f,
		LATERAL (SELECT coalesce(least(statement_timestamp() + $4::interval, f.first + $5::interval), 'infinity') AS due,
			coalesce(f.first + $5::interval < statement_timestamp() + $4::interval, $5::interval IS NOT NULL) AS capped) d
	)
	WHERE k.key = EXCLUDED.key
	RETURNING k.key_hash, k.tail, k.ready_at, k.burst_first, k.leased_until, k.held, k.batch
), m AS (
	INSERT INTO {schema}.messages (queue, key_hash, seq, value, added_at)
	SELECT $1, k.key_hash, k.tail - cardinality($3::bytea[]) + v.i - 1, v.value, statement_timestamp()
	FROM k, unnest($3::bytea[]) WITH ORDINALITY AS v(value, i)
)` + refusedSQL + `
SELECT coalesce(w.woke, false), CASE WHEN w.woke AND $6::text IS NOT NULL THEN pg_notify($6, $7) END,
	w.woke IS NOT NULL, EXISTS (SELECT FROM refused)
FROM (VALUES (1)) AS one(x)
LEFT JOIN (k CROSS JOIN LATERAL (SELECT k.leased_until IS NULL AND NOT k.held AND k.batch = 0
	AND (k.ready_at = statement_timestamp()
		OR (k.burst_first = statement_timestamp() AND k.ready_at > statement_timestamp())) AS woke) w) ON true`

// addDelayedSQL appends values that are due after a delay to a key, ending
// its open burst, whose values are ready now. A key that is leased, held,
// waiting for a delay, ready already or scheduled keeps its place in the
// ready order; a key whose values were all in the burst is ready now; a
// new key, or the empty row of a paused one, is ready when the values are
// due (scheduled until then). The key's gate becomes the values' time if
// that is later. It returns one row, as addReadySQL does, whose first
// column also says that the key's place became the values' time, which
// may come before what a Wait sleeps for.
//
// $1 queue, $2 key, $3 values (bytea[]), $4 delay (NULL: never), $5
// channel (NULL: none), $6 payload, $7 bound (NULL: none), $8 slot (NULL:
// the session's).
const addDelayedSQL = countAddSQL + `, due AS (
	SELECT coalesce(statement_timestamp() + $4::interval, 'infinity') AS at
), k AS (
	INSERT INTO {schema}.keys AS k (queue, key_hash, key, tail, ready_at, gate)
	SELECT $1, sha256($2), $2, cardinality($3::bytea[]), due.at, due.at FROM counted, due
	ON CONFLICT (queue, key_hash) DO UPDATE SET
		tail = k.tail + EXCLUDED.tail,
		burst = 0,
		gate = greatest(k.gate, EXCLUDED.gate),
		ready_at = CASE WHEN k.leased_until IS NOT NULL OR k.held OR k.batch > 0
				OR k.tail - k.head > CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END
			THEN k.ready_at
			WHEN k.tail = k.head THEN least(EXCLUDED.ready_at, CASE WHEN k.lanes > 0 THEN k.ready_at END)
			ELSE statement_timestamp() END
	WHERE k.key = EXCLUDED.key
	RETURNING k.key_hash, k.tail, k.ready_at
), m AS (
	INSERT INTO {schema}.messages (queue, key_hash, seq, value, added_at, due_at)
	SELECT $1, k.key_hash, k.tail - cardinality($3::bytea[]) + v.i - 1, v.value, statement_timestamp(), due.at
	FROM k, due, unnest($3::bytea[]) WITH ORDINALITY AS v(value, i)
)` + refusedSQL + `
SELECT coalesce(w.woke, false), CASE WHEN w.woke AND $5::text IS NOT NULL THEN pg_notify($5, $6) END,
	w.woke IS NOT NULL, EXISTS (SELECT FROM refused)
FROM (VALUES (1)) AS one(x)
LEFT JOIN (k CROSS JOIN LATERAL (SELECT coalesce(k.ready_at = statement_timestamp()
	OR k.ready_at = (SELECT at FROM due), false) AS woke) w) ON true`

// claimSQL leases up to {keys} ready keys of a queue, oldest-ready first. It
// locks key rows only, skipping those another transaction holds, and
// commits at once: no transaction stays open while a lease is out. It
// leaves the keys of lanes to lease_lanes (lanes.go). It
// leases no paused key, which keys_ready leaves out, and nothing of a
// paused queue (running, read once), and then says NULL, never, for the
// next. A lease
// takes the head batch kept from before, or the ready values up to
// max_batch and up to the first value that is not due (looked for only
// in a key whose gate has not passed); a lease that lapsed is leased again at the next attempt. The
// values it takes stop at the tail that the statement's snapshot sees
// (seen): an Add that committed after the snapshot but before the row was
// locked moved the locked row's tail past values that the statement cannot
// read, and they would be acked unseen. It returns a row per lease, in the
// ready order, or one row with found false; every row carries the server's
// now and the earliest ready_at of the keys it did not lease, NULL if there
// is none; of a ready key before the first it locked, which another
// transaction holds, it may not know ({floor}, see claimFloorSQL).
//
// {keys} is the most keys to lease, a literal: PostgreSQL's generic plan
// of a statement guesses that a LIMIT given as a parameter keeps a tenth of
// the rows, so with many ready keys it would plan every Claim anew. {take}
// is the keys it leases of those it picked: all of them (picked), or, in
// a flight of Acks (sharedfinish.go), as many as the finishAcksSQL before
// it left in the setting pgstore.leases (claimSharedTake); the others stay
// as they were, locked until the commit.
//
// $1 queue, $2 max_batch (NULL: all), $3 ttl (NULL: never), $4 holder.
const claimSQL = `
WITH running AS MATERIALIZED (
	SELECT {running} AS running
)` + claimPickSQL + `, seen AS MATERIALIZED (
	-- A subquery per key, read by the primary key: as a join, PostgreSQL
	-- may scan every key of the queue.
	SELECT queue, key_hash, (SELECT tail FROM {schema}.keys s WHERE s.queue = $1 AND s.key_hash = picked.key_hash) AS tail
	FROM picked
), leased AS (
	UPDATE {schema}.keys AS k SET
		burst = CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END,
		batch = CASE WHEN k.batch > 0 THEN k.batch
			ELSE least(least(k.tail - CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END,
				seen.tail) - k.head, $2::bigint,
				CASE WHEN k.gate > statement_timestamp() THEN (
					SELECT min(d.seq) - k.head FROM {schema}.messages AS d
					WHERE d.queue = k.queue AND d.key_hash = k.key_hash AND d.seq >= k.head
						AND d.due_at IS NOT NULL AND d.due_at > statement_timestamp()
				) END) END,
		attempt = CASE WHEN k.leased_until IS NULL THEN k.attempt ELSE k.attempt + 1 END,
		fence = nextval('{schema}.fences'),
		leased_at = statement_timestamp(),
		holder = $4::bytea,
		leased_until = coalesce(statement_timestamp() + $3::interval, 'infinity'),
		ready_at = coalesce(statement_timestamp() + $3::interval, 'infinity'),
		retrying = false
	FROM {take} JOIN seen USING (queue, key_hash)
	-- The rows are reached through the picked keys' columns, queue and
	-- key_hash, not through the queue parameter: with queue = $1, a plan
	-- may read every key of the queue by that alone, which costs no more
	-- than reading them by key while the queue is small, and is kept as
	-- it grows (see removeBatchSQL).
	WHERE k.queue = picked.queue AND k.key_hash = picked.key_hash
		AND (k.batch > 0 OR least(k.tail - CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END,
			seen.tail) > k.head)
	RETURNING k.key_hash, k.key, k.head, k.batch, k.attempt, k.fence, k.leased_until, picked.ready_at AS was_ready
), leases AS (
	SELECT l.key, l.attempt, l.fence, l.was_ready,
		array_agg(m.value ORDER BY m.seq) AS vals,
		min(m.added_at) FILTER (WHERE m.seq = l.head) AS first
	FROM leased l
	JOIN {schema}.messages m ON m.queue = $1 AND m.key_hash = l.key_hash AND m.seq >= l.head AND m.seq < l.head + l.batch
	GROUP BY l.key_hash, l.key, l.attempt, l.fence, l.was_ready, l.head
), upcoming AS (
	-- A ready key not leased here, else the first key due: each the
	-- first of a range of keys_ready, so that no plan reads the queue.
	SELECT CASE WHEN (SELECT running FROM running) THEN coalesce((
		SELECT ready_at FROM {schema}.keys
		WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused
			AND ready_at >= {floor}
			AND key_hash <> ALL (ARRAY(SELECT key_hash FROM leased))
		ORDER BY ready_at
		LIMIT 1
	), (
		SELECT ready_at FROM {schema}.keys
		WHERE queue = $1 AND ready_at > statement_timestamp() AND NOT paused
		ORDER BY ready_at
		LIMIT 1
	)) END AS ready_at
)
SELECT statement_timestamp(),
	least((SELECT ready_at FROM upcoming), (SELECT leased_until FROM leased LIMIT 1)),
	l.key IS NOT NULL,
	coalesce(l.key, ''::bytea),
	coalesce(l.attempt, 0),
	coalesce(l.fence, 0),
	l.vals,
	coalesce(l.first, statement_timestamp())
FROM (VALUES (1)) AS one(x)
LEFT JOIN leases l ON true
ORDER BY l.was_ready, l.key`

// claimFloorSQL is {floor} of claimSQL: the search for a ready key not
// leased here starts in keys_ready at the first key that picked locked, if
// any. Each claim and Finish of a key leaves the row's old entry in
// keys_ready, dead, until a VACUUM removes it, and the entries of the keys
// leased since the last one come before the first ready key: a search from
// the start of the queue steps over all of them, O(claims since the
// VACUUM), as picked does, and this search would a second time. The ready
// keys before the first picked are those that picked skipped, held by
// other transactions (or keys of lanes, which lease_lanes leases): if no
// key after them is ready, next says when one is due rather than 0, and
// a caller given leases claims again anyway.
const claimFloorSQL = `coalesce((SELECT min(ready_at) FROM picked), '-infinity')`

// claimPickSQL is the CTE of claimSQL that picks the keys it may lease:
// the first {keys} ready ones, locked. A queue with tenants has its own
// (tenant.go).
const claimPickSQL = `, picked AS MATERIALIZED (
	SELECT queue, key_hash, ready_at
	FROM {schema}.keys
	WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused AND (SELECT running FROM running)
		AND lanes = 0
	ORDER BY ready_at
	LIMIT {keys}
	FOR UPDATE SKIP LOCKED
)`

// runningSQL is true unless queue {queue} is paused (PauseQueue): one
// read of paused_queues by its primary key, which PostgreSQL makes once
// per statement, since it names no row of the statement's.
const runningSQL = `NOT EXISTS (SELECT FROM {schema}.paused_queues AS pq WHERE pq.queue = {queue})`

// claimSharedTake is {take} of claimSQL after a finishAcksSQL: the first
// picked keys, in the ready order, as many as it left in pgstore.leases.
const claimSharedTake = `(SELECT * FROM picked ORDER BY ready_at, key_hash
		LIMIT current_setting('pgstore.leases')::bigint) AS picked`

// extendSQL renews a lease that has not lapsed. It changes no row when the
// lease is lost.
//
// $1 queue, $2 key, $3 fence, $4 ttl (NULL: never).
const extendSQL = `
UPDATE {schema}.keys SET
	leased_until = coalesce(statement_timestamp() + $4::interval, 'infinity'),
	ready_at = coalesce(statement_timestamp() + $4::interval, 'infinity')
WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND fence = $3 AND leased_until > statement_timestamp()`

// finishRemoveSQL is the part that finishAckSQL and finishDropSQL share: it
// locks the key row of a lease that holds (k) and ends the lease as
// removeBatchSQL does. It ends inside its last CTE, for the two to close.
const finishRemoveSQL = `
WITH k AS MATERIALIZED (
	SELECT queue, key_hash, head, tail, batch, attempt, burst_due, gate, paused,
		CASE WHEN burst_due <= statement_timestamp() THEN 0 ELSE burst END AS open
	FROM {schema}.keys
	WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND fence = $3 AND leased_until > statement_timestamp()
	FOR UPDATE
)` + removeBatchSQL

// removeBatchSQL ends the leases whose key rows k locked by removing their
// batches (done, which returns the removed values), which it takes off the
// queue's count (uncountSQL): a key with values left is ready now, behind
// the keys already waiting, or when its first value is due if its gate
// has not passed and that is later, or when its open burst is due, and forgets the
// batch's error; a key with none is removed, or, if paused, kept empty
// (parked: a row with no values, no lease, burst or hold, fence 0, the
// fence of a key's last lease since it held none, and ready never, which
// ResumeKey removes and an Add fills as it would a new row). It ends
// inside its last CTE.
//
// It reaches the rows through k's columns, queue and key_hash, and not through
// the queue parameter, which would let a plan read the whole queue: the
// cheapest way while the queue is small, and a plan made then is kept as
// the queue grows (TestPlansMadeSmallStayBounded).
//
// The rows it keeps and those it parks are written by one UPDATE: each
// UPDATE of a statement opens every index of keys and reads its rows by
// keys_pkey whether or not it writes any, so a second one for the rare
// parked key would cost every statement that start-up.
//
// k has the columns queue, key_hash, head, tail, batch, burst_due, gate,
// paused and open (the values of an open burst).
const removeBatchSQL = uncountSQL + `, kept AS (
	-- A row with no values left (head = tail) is a paused key's, parked.
	UPDATE {schema}.keys AS u SET
		head = k.head + k.batch, batch = 0, attempt = 1,
		burst = CASE WHEN k.tail = k.head + k.batch THEN 0 ELSE k.open END,
		burst_capped = CASE WHEN k.tail = k.head + k.batch THEN false ELSE u.burst_capped END,
		gate = CASE WHEN k.tail = k.head + k.batch THEN NULL ELSE u.gate END,
		fence = CASE WHEN k.tail = k.head + k.batch THEN 0 ELSE u.fence END,
		holder = CASE WHEN k.tail = k.head + k.batch THEN NULL ELSE u.holder END,
		held = CASE WHEN k.tail = k.head + k.batch THEN false ELSE u.held END,
		held_at = CASE WHEN k.tail = k.head + k.batch THEN NULL ELSE u.held_at END,
		leased_until = NULL, retrying = false, error = NULL,
		ready_at = CASE WHEN k.tail = k.head + k.batch THEN 'infinity'
			WHEN k.tail - k.head - k.batch <= k.open THEN k.burst_due
			WHEN k.gate > statement_timestamp() THEN greatest(statement_timestamp(), (
				SELECT d.due_at FROM {schema}.messages AS d
				WHERE d.queue = k.queue AND d.key_hash = k.key_hash AND d.seq = k.head + k.batch))
			ELSE statement_timestamp() END
	FROM k
	WHERE u.queue = k.queue AND u.key_hash = k.key_hash AND (k.tail > k.head + k.batch OR k.paused)
), emptied AS (
	DELETE FROM {schema}.keys AS d USING k
	WHERE d.queue = k.queue AND d.key_hash = k.key_hash AND k.tail = k.head + k.batch AND NOT k.paused
), done AS (
	DELETE FROM {schema}.messages AS m USING k
	WHERE m.queue = k.queue AND m.key_hash = k.key_hash AND m.seq >= k.head AND m.seq < k.head + k.batch
	RETURNING m.seq, m.value`

// finishAckSQL ends a lease by removing its batch. It returns one row,
// with more, if the lease was current.
//
// $1 queue, $2 key, $3 fence.
const finishAckSQL = finishRemoveSQL + `
)
SELECT k.tail > k.head + k.batch FROM k`

// finishDropSQL is finishAckSQL that keeps the batch as a dead letter.
//
// $1 queue, $2 key, $3 fence, $4 error.
const finishDropSQL = finishRemoveSQL + `
), dead AS (
	INSERT INTO {schema}.dead_letters (queue, key, vals, error, attempt, dropped_at)
	SELECT $1, $2, array_agg(done.value ORDER BY done.seq), $4, k.attempt, statement_timestamp()
	FROM done, k
	GROUP BY k.attempt
)
SELECT k.tail > k.head + k.batch FROM k`

// finishAcksSQL acks several leases in one statement, as finishAckSQL
// acks one: each lease given whose fence and expiry hold is ended, and
// returns a row, with its ordinal in the arrays and more. It never waits
// for a row lock: a key row that another transaction holds (an AddTx not
// yet committed, say) is skipped, as is a lease that does not hold, and
// those are tried again (see sharedfinish.go). It leaves in the transaction's
// setting pgstore.leases the sum of want over the leases it ended, the
// keys that the claim statement after it may lease (claimSharedTake), and
// returns one row of NULLs when it ended none.
//
// It reads each lease's row on its own (LATERAL), by its queue and key's
// hash, comparing the key, so that a plan made while the queue was small
// has no way to read the whole queue instead; and the LIMIT, which keeps
// every lease, has the planner count one lease rather than its usual guess
// of ten elements of an array, for which reading a small queue whole looks
// cheaper than ten reads by key (see removeBatchSQL).
//
// $1 queue, $2 keys (bytea[]), $3 fences (bigint[]), $4 want (integer[]).
const finishAcksSQL = `
WITH f AS (
	SELECT f.*, sha256(f.key) AS key_hash
	FROM unnest($2::bytea[], $3::bigint[], $4::integer[]) WITH ORDINALITY AS f(key, fence, want, i)
	LIMIT cardinality($2::bytea[])
), k AS MATERIALIZED (
	SELECT f.i, f.want, r.queue, r.key_hash, r.head, r.tail, r.batch, r.burst_due, r.gate, r.paused,
		CASE WHEN r.burst_due <= statement_timestamp() THEN 0 ELSE r.burst END AS open
	FROM f CROSS JOIN LATERAL (
		SELECT * FROM {schema}.keys AS r
		WHERE r.queue = $1 AND r.key_hash = f.key_hash AND r.key = f.key AND r.fence = f.fence
			AND r.leased_until > statement_timestamp()
		FOR UPDATE SKIP LOCKED
	) r
)` + removeBatchSQL + `
), n AS (
	SELECT set_config('pgstore.leases', coalesce(sum(k.want), 0)::text, true) FROM k
)
SELECT k.i, k.tail > k.head + k.batch FROM n LEFT JOIN k ON true`

// finishRetrySQL ends a lease by keeping its batch at the head, ready
// after a delay; a Retry counts an attempt and keeps its error, a Defer
// does neither. It changes no row when the lease is lost.
//
// $1 queue, $2 key, $3 fence, $4 retry (bool), $5 delay (NULL: never), $6
// error.
const finishRetrySQL = `
UPDATE {schema}.keys SET
	attempt = attempt + CASE WHEN $4::boolean THEN 1 ELSE 0 END,
	retrying = $4::boolean,
	error = CASE WHEN $4::boolean THEN $6::bytea ELSE error END,
	leased_until = NULL,
	ready_at = coalesce(statement_timestamp() + $5::interval, 'infinity')
WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND fence = $3 AND leased_until > statement_timestamp()`

// finishHoldSQL ends a lease by holding the key: its batch stays at the
// head, with the hold's error, and the key leaves the ready order until
// released. It changes no row when the lease is lost.
//
// $1 queue, $2 key, $3 fence, $4 error.
const finishHoldSQL = `
UPDATE {schema}.keys SET
	held = true, held_at = statement_timestamp(), error = $4::bytea,
	retrying = false, leased_until = NULL, ready_at = NULL
WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND fence = $3 AND leased_until > statement_timestamp()`

// releaseSQL puts a held key back in the ready order, at the tail, with its
// attempts started over and its error forgotten. It changes no row if the
// key was not held, or is a key of lanes (release_lanes, lanes.go).
//
// $1 queue, $2 key.
const releaseSQL = `
UPDATE {schema}.keys SET
	held = false, held_at = NULL, error = NULL, attempt = 1, batch = 0, ready_at = statement_timestamp()
WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND held AND lanes = 0`

// upcomingSQL returns, for each queue given, a row with the server's now,
// the queue, and the earliest ready_at of its keys, NULL if none is
// scheduled or the queue is paused: one read of keys_ready per queue, which
// leaves the paused keys out.
//
// $1 queues (text[]).
const upcomingSQL = `
SELECT statement_timestamp(), q.queue, (
	SELECT ready_at FROM {schema}.keys
	WHERE queue = q.queue AND ready_at IS NOT NULL AND NOT paused AND {running}
	ORDER BY ready_at
	LIMIT 1
)
FROM unnest($1::text[]) AS q(queue)`

// statsSQL counts a queue's keys by state, as store.Stats defines them, in
// one snapshot. It visits every key of the queue.
//
// $1 queue.
const statsSQL = `
SELECT` + statsColumnsSQL + `
FROM {schema}.keys
WHERE queue = $1`

// statsColumnsSQL are the columns of statsSQL, in store.Stats's order,
// over the keys of queue $1. A paused key's row without values (see
// the parked rows of removeBatchSQL) counts in PausedKeys alone.
const statsColumnsSQL = `
	coalesce(sum(tail - head + lent), 0),
	count(*) FILTER (WHERE tail > head OR lent > 0),
	count(*) FILTER (WHERE ready_at <= statement_timestamp() AND NOT paused),
	count(*) FILTER (WHERE burst > 0 AND burst_due > statement_timestamp()),
	count(*) FILTER (WHERE (leased_until > statement_timestamp() OR out_until > statement_timestamp()) AND NOT held),
	count(*) FILTER (WHERE retrying AND leased_until IS NULL AND ready_at > statement_timestamp() AND NOT paused),
	coalesce(sum(tail - head - batch) FILTER (WHERE retrying AND leased_until IS NULL AND ready_at > statement_timestamp() AND NOT paused), 0),
	count(*) FILTER (WHERE held),
	coalesce(sum(tail - head + lent) FILTER (WHERE held), 0),
	(SELECT count(*) FROM {schema}.dead_letters WHERE queue = $1),
	count(*) FILTER (WHERE paused),
	NOT {running}`

// deadLettersSQL lists a queue's dead letters by ID.
//
// $1 queue, $2 after this ID, $3 limit.
const deadLettersSQL = `
SELECT id, key, vals, error, attempt, dropped_at
FROM {schema}.dead_letters
WHERE queue = $1 AND id > $2
ORDER BY id
LIMIT $3`

// redriveSQL appends a dead letter's values to its key as addReadySQL
// does without a bound, counting them in the session's slot, and removes
// the dead letter once they were. It returns a row if the dead letter
// existed: whether it was redriven, which it is unless another key of the
// queue with the same SHA-256 has values (the dead letter is then kept,
// and the count taken back as refusedSQL does), and whether the key
// became ready now.
//
// $1 queue, $2 id.
const redriveSQL = `
WITH d AS MATERIALIZED (
	SELECT key, vals FROM {schema}.dead_letters
	WHERE queue = $1 AND id = $2
	FOR UPDATE
), counted AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT $1, pg_backend_pid() % {addSlots}, cardinality(d.vals) FROM d
	WHERE cardinality(d.vals) > 0
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
	RETURNING 1
), k AS (
	INSERT INTO {schema}.keys AS k (queue, key_hash, key, tail, ready_at)
	SELECT $1, sha256(d.key), d.key, cardinality(d.vals), statement_timestamp() FROM d, counted
	ON CONFLICT (queue, key_hash) DO UPDATE SET
		tail = k.tail + EXCLUDED.tail,
		burst = 0,
		ready_at = CASE WHEN k.leased_until IS NULL AND NOT k.held AND k.batch = 0 AND NOT {isScheduled}
			THEN least(k.ready_at, EXCLUDED.ready_at) ELSE k.ready_at END
	WHERE k.key = EXCLUDED.key
	RETURNING k.key_hash, k.tail, k.ready_at
), m AS (
	INSERT INTO {schema}.messages (queue, key_hash, seq, value, added_at)
	SELECT $1, k.key_hash, k.tail - cardinality(d.vals) + v.i - 1, v.value, statement_timestamp()
	FROM d, k, unnest(d.vals) WITH ORDINALITY AS v(value, i)
), refused AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT $1, {removeSlot} + pg_backend_pid() % {addSlots}, -cardinality(d.vals)
	FROM d, counted
	WHERE NOT EXISTS (SELECT FROM k)
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
), gone AS (
	DELETE FROM {schema}.dead_letters
	WHERE queue = $1 AND id = $2 AND (EXISTS (SELECT FROM k) OR (SELECT cardinality(vals) = 0 FROM d))
	RETURNING id
)
SELECT EXISTS (SELECT FROM gone), coalesce(k.ready_at = statement_timestamp(), false)
FROM d LEFT JOIN k ON true`

// purgeSQL removes a queue's dead letters dropped before a time.
//
// $1 queue, $2 before.
const purgeSQL = `
DELETE FROM {schema}.dead_letters WHERE queue = $1 AND dropped_at < $2`

// notifySQL wakes the Waits of queues: one notification each, in a
// transaction that writes nothing, so it commits without waiting for a
// disk.
//
// $1 channel, $2 payloads (text[]).
const notifySQL = `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`
