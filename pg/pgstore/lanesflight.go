package pgstore

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/store"
)

// A flight of Acks of lanes (sharedfinish.go) in a queue without tenants
// and without a KeyRate runs four statements, in one round trip and one
// transaction: the common Acks, the other Acks, the common claim, the
// other claim. The common cases are those of ack_last_lanes and
// lease_free_lanes (migration 016): an Ack that ends its key's only lane,
// and a claim whose keys have no lane, no lease and nothing that holds
// their values back. Each takes a plain statement here, with the rows
// locked in it, where the functions lock them in a statement of their own
// and then run a second: a call of a function sets up the plans of its
// statements one by one, each a plan of its own, and that set-up, not the
// statements' run, was most of what a flight of lanes cost beyond one of
// keys of one lease. The other cases go to the functions of 014 (ack_lanes,
// lease_lanes), which the statements before them leave the work to by a
// setting of the transaction; a statement whose setting says there is no
// such work runs no function (a one-time filter above the call).
//
// One statement reads the rows that it did not lock as its snapshot saw
// them, before a transaction that committed since. So each common
// statement takes a key only if the tail that its snapshot sees is the
// tail of the row it locked: then no Add came in between, and the values
// it reads and the row it writes are the row's, as the functions, which
// read them in a statement after the locks, would read them. A key that an
// Add reached in between goes to the other statement.
//
// The rows written are those that the functions of 016 write (lanes and
// keys as lease_lanes and ack_lanes leave them), so instances of the
// versions before, which call those functions, run beside these on the
// same queue.

// ackLanesCommonSQL ends the leases of the Acks of a flight whose keys
// have one lane, theirs, as ack_last_lanes does: it removes the lane and
// its values, counts them off in the session's slot of removals, and
// leaves the key one of one lease, as removeBatchSQL leaves a key whose
// batch was acked. It locks the Acks' key rows FOR UPDATE SKIP LOCKED.
// It returns a row per lease it ended, with its ordinal in the arrays and
// more, or one row of NULLs; it sets pgstore.leases, as finishAcksSQL
// does, to the sum of want over the leases it ended, and pgstore.acked
// to that sum too if a key it locked has other lanes (ackLanesOtherSQL
// then runs ack_lanes), else to -1.
//
// $1 queue, $2 keys (bytea[]), $3 fences (bigint[]), $4 want (integer[]).
const ackLanesCommonSQL = `
WITH f AS (
	SELECT f.*, sha256(f.key) AS key_hash
	FROM unnest($2::bytea[], $3::bigint[], $4::integer[]) WITH ORDINALITY AS f(key, fence, want, i)
	LIMIT cardinality($2::bytea[])
), r AS MATERIALIZED (
	-- Each Ack's key row, as locked, and its tail as the snapshot saw it.
	SELECT f.i, f.fence AS lane, f.want, r.queue, r.key_hash, r.lanes, r.head, r.tail, r.held, r.paused, r.gate,
		r.burst_due, CASE WHEN r.burst_due <= statement_timestamp() THEN 0 ELSE r.burst END AS open,
		(SELECT s.tail FROM {schema}.keys AS s WHERE s.queue = r.queue AND s.key_hash = r.key_hash) AS seen
	FROM f CROSS JOIN LATERAL (
		SELECT * FROM {schema}.keys AS r
		WHERE r.queue = $1 AND r.key_hash = f.key_hash AND r.key = f.key
		FOR UPDATE SKIP LOCKED
	) r
), ends AS MATERIALIZED (
	DELETE FROM {schema}.lanes AS l USING r
	WHERE l.queue = r.queue AND l.key_hash = r.key_hash AND l.fence = r.lane AND l.leased_until > statement_timestamp()
		AND r.lanes = 1 AND r.seen = r.tail
	RETURNING r.*, l.lo, l.n
), removed AS (
	DELETE FROM {schema}.messages AS m USING ends AS e
	WHERE m.queue = e.queue AND m.key_hash = e.key_hash AND m.seq >= e.lo AND m.seq < e.lo + e.n
), counted AS (
	INSERT INTO {schema}.counts AS c (queue, slot, n)
	SELECT $1, {removeSlot} + pg_backend_pid() % {addSlots}, -sum(e.n) FROM ends AS e HAVING count(*) > 0
	ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
), n AS MATERIALIZED (
	-- Each key of a lane ended, without lanes now: empty once it has no
	-- values, else ready as a key of one lease.
	SELECT e.i, e.want, e.queue, e.key_hash, e.paused, e.open, e.tail = e.head AS empty,
		CASE WHEN e.tail = e.head THEN 'infinity'
			WHEN e.held THEN NULL
			WHEN e.tail - e.head <= e.open THEN e.burst_due
			WHEN e.gate > statement_timestamp() THEN greatest(statement_timestamp(), (SELECT d.due_at FROM {schema}.messages AS d
				WHERE d.queue = e.queue AND d.key_hash = e.key_hash AND d.seq = e.head))
			ELSE statement_timestamp() END AS ready_at
	FROM ends AS e
), gone AS (
	DELETE FROM {schema}.keys AS d USING n
	WHERE d.queue = n.queue AND d.key_hash = n.key_hash AND n.empty AND NOT n.paused
), kept AS (
	UPDATE {schema}.keys AS u SET
		fence = CASE WHEN n.empty THEN 0 ELSE u.fence END,
		holder = CASE WHEN n.empty THEN NULL ELSE u.holder END,
		slot_at = CASE WHEN n.empty THEN u.slot_at ELSE statement_timestamp() END,
		batch = 0, attempt = 1,
		burst = CASE WHEN n.empty THEN 0 ELSE n.open END,
		burst_capped = CASE WHEN n.empty THEN false ELSE u.burst_capped END,
		gate = CASE WHEN n.empty THEN NULL ELSE u.gate END,
		leased_until = NULL,
		held = CASE WHEN n.empty THEN false ELSE u.held END,
		held_at = CASE WHEN n.empty THEN NULL ELSE u.held_at END,
		retrying = false,
		error = CASE WHEN NOT n.empty AND u.held THEN u.error END,
		ready_at = n.ready_at,
		lanes = 0, lent = 0, out_until = NULL
	FROM n
	WHERE u.queue = n.queue AND u.key_hash = n.key_hash AND NOT (n.empty AND NOT n.paused)
), s AS (
	SELECT set_config('pgstore.leases', coalesce(sum(n.want), 0)::text, true),
		set_config('pgstore.acked', CASE WHEN EXISTS (SELECT FROM r WHERE r.lanes > 1 OR (r.lanes = 1 AND r.seen <> r.tail))
			THEN coalesce(sum(n.want), 0) ELSE -1 END::text, true)
	FROM n
)
SELECT n.i, NOT n.empty AS more FROM s LEFT JOIN n ON true`

// ackLanesOtherSQL ends, with ack_lanes (014), the Acks that
// ackLanesCommonSQL left, if it left any of keys of lanes: those it ended
// have no lane left to end. ack_lanes sets pgstore.leases to the sum of
// want over those it ends.
const ackLanesOtherSQL = `SELECT i, more FROM {schema}.ack_lanes($1, $2, $3, $4, {removeSlot} + pg_backend_pid() % {addSlots})
WHERE current_setting('pgstore.acked')::integer >= 0`

// claimLanesCommonSQL is lease_free_lanes (016) after ackLanesCommonSQL,
// for as many leases as the Acks ended want (pgstore.leases, and
// pgstore.acked if ackLanesOtherSQL ran), in one statement: when each
// key it locks is one that lease_free_lanes leases without reading lanes
// (no lane, no lease, no hold, no open burst, no gate ahead, values), with
// no Add since its snapshot, it leases those keys' batches as
// lease_free_lanes does (each key's first, then round by round, up to
// per_key a key) and returns its rows; otherwise it writes nothing and
// returns none, and sets pgstore.busy, for claimLanesOtherSQL. It picks
// up to {keys} keys (see claimSQL) and takes the first of them, as many
// as the leases wanted, as lease_free_lanes does.
//
// $1 queue, $2 max_batch (NULL: all), $3 ttl (NULL: never), $4 holder,
// $5 per_key.
const claimLanesCommonSQL = `
WITH running AS MATERIALIZED (
	SELECT {running} AS running
), want AS MATERIALIZED (
	SELECT current_setting('pgstore.leases')::integer + greatest(current_setting('pgstore.acked')::integer, 0) AS n
), picked AS MATERIALIZED (
	SELECT queue, key_hash, key, ready_at, lanes, batch, leased_until, held, head, tail, burst, burst_due, gate
	FROM {schema}.keys
	WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused AND (SELECT running FROM running)
	ORDER BY ready_at
	LIMIT {keys}
	FOR UPDATE SKIP LOCKED
), taken AS MATERIALIZED (
	SELECT p.*, row_number() OVER (ORDER BY p.ready_at, p.key_hash) AS i, coalesce($2::bigint, p.tail - p.head) AS size,
		(SELECT s.tail FROM {schema}.keys AS s WHERE s.queue = p.queue AND s.key_hash = p.key_hash) AS seen
	FROM (SELECT * FROM picked ORDER BY ready_at, key_hash LIMIT (SELECT n FROM want)) AS p
), common AS MATERIALIZED (
	SELECT coalesce(bool_and(t.lanes = 0 AND t.batch = 0 AND t.leased_until IS NULL
		AND NOT t.held AND t.tail > t.head AND t.seen = t.tail
		AND (t.burst = 0 OR t.burst_due <= statement_timestamp()) AND (t.gate IS NULL OR t.gate <= statement_timestamp())), true) AS ok,
		coalesce(min(t.ready_at), '-infinity') AS floor,
		coalesce(array_agg(t.key_hash), '{}') AS hs
	FROM taken AS t
), chosen AS MATERIALIZED (
	-- Every batch a key may lease now, the j-th from 0, up to per_key,
	-- round by round.
	SELECT t.queue, t.key_hash, t.key, t.i, g.j, t.head + g.j * t.size AS lo, least(t.size, t.tail - t.head - g.j * t.size) AS n
	FROM taken AS t
	CROSS JOIN LATERAL generate_series(0, least((t.tail - t.head + t.size - 1) / t.size, greatest($5::integer, 1)) - 1) AS g(j)
	WHERE (SELECT ok FROM common)
	ORDER BY g.j, t.i
	LIMIT (SELECT n FROM want)
), fenced AS MATERIALIZED (
	-- Fences in the order of the leases, so each key's grow.
	SELECT c.*, nextval('{schema}.fences') AS f FROM chosen AS c ORDER BY c.j, c.i
), fresh AS (
	INSERT INTO {schema}.lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, holder)
	SELECT f.queue, f.key_hash, f.f, f.lo, f.n, 1, coalesce(statement_timestamp() + $3::interval, 'infinity'),
		statement_timestamp(), $4::bytea
	FROM fenced AS f
), n AS MATERIALIZED (
	-- Each key, with its lanes as leased: all out. It is ready now while
	-- it may lease more, at the first lapse otherwise.
	SELECT m.queue, m.key_hash, m.lanes, m.lent, m.top,
		CASE WHEN m.lanes < greatest($5::integer, 1) AND t.tail > t.head + m.lent THEN statement_timestamp()
			ELSE coalesce(statement_timestamp() + $3::interval, 'infinity') END AS next_at
	FROM (
		SELECT f.queue, f.key_hash, count(*)::integer AS lanes, sum(f.n) AS lent, max(f.f) AS top
		FROM fenced AS f GROUP BY f.queue, f.key_hash
	) AS m JOIN taken AS t USING (key_hash)
), kept AS (
	UPDATE {schema}.keys AS u SET per_key = greatest($5::integer, 1), head = u.head + n.lent, fence = n.top,
		leased_at = statement_timestamp(), holder = $4::bytea, slot_at = statement_timestamp(),
		batch = CASE WHEN n.lanes >= greatest($5::integer, 1) THEN 1 ELSE 0 END, burst = 0, retrying = false,
		ready_at = n.next_at, lanes = n.lanes, lent = n.lent, out_until = coalesce(statement_timestamp() + $3::interval, 'infinity')
	FROM n
	WHERE u.queue = n.queue AND u.key_hash = n.key_hash
), busy AS MATERIALIZED (
	SELECT set_config('pgstore.busy', (NOT c.ok)::text, true), c.ok FROM common AS c
)
SELECT statement_timestamp() AS o_now,
	CASE WHEN (SELECT running FROM running) THEN least((SELECT r.ready_at FROM {schema}.keys AS r
		WHERE r.queue = $1 AND r.ready_at IS NOT NULL AND NOT r.paused AND r.ready_at >= (SELECT floor FROM common)
			AND r.key_hash <> ALL ((SELECT hs FROM common)::bytea[])
		ORDER BY r.ready_at LIMIT 1), (SELECT min(n.next_at) FROM n)) END AS o_upcoming,
	f.f IS NOT NULL AS o_found, coalesce(f.key, ''::bytea) AS o_key, CASE WHEN f.f IS NULL THEN 0 ELSE 1 END AS o_attempt,
	coalesce(f.f, 0) AS o_fence,
	(SELECT array_agg(m.value ORDER BY m.seq) FROM {schema}.messages AS m
		WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq >= f.lo AND m.seq < f.lo + f.n) AS o_vals,
	coalesce((SELECT m.added_at FROM {schema}.messages AS m WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq = f.lo),
		statement_timestamp()) AS o_first
FROM busy LEFT JOIN fenced AS f ON true
WHERE busy.ok
ORDER BY f.f`

// claimLanesOtherSQL is the claim of a flight with lease_lanes (014),
// for as many leases as claimLanesCommonSQL would have taken, if it took
// none.
const claimLanesOtherSQL = `SELECT * FROM {schema}.lease_lanes($1,
	current_setting('pgstore.leases')::integer + greatest(current_setting('pgstore.acked')::integer, 0), $2, $3, $4, $5)
WHERE current_setting('pgstore.busy')::boolean`

// queueLanesFlight queues on b the statements of a flight of g's Acks of
// lanes, with runFlight's arguments of the Acks and, if want > 0, the
// claim of up to want leases, whose leases and next it sets. ended reads
// the rows of the Acks' statements.
func (s *Store) queueLanesFlight(b *pgx.Batch, g ackGroup, args []any, want int, maxBatch any,
	ended func(pgx.Rows) error, leases *[]store.Lease, next *time.Duration) {
	b.Queue(s.q.ackLanesCommon, args...).Query(ended)
	b.Queue(s.q.ackLanesOther, args...).Query(ended)
	if want <= 0 {
		return
	}
	claimArgs := []any{g.queue, maxBatch, interval(g.ttl), bytesOf(g.holder), g.perKey}
	// One of the two claims returns rows, the other none.
	scan := func(rows pgx.Rows) error {
		ls, n, some, err := scanClaimRows(g.queue, rows)
		if some {
			*leases, *next = ls, n
		}
		return err
	}
	b.Queue(s.claimSQL(claimForm{keys: want, kind: lanesCommonClaim, shared: true}), claimArgs...).Query(scan)
	b.Queue(s.q.claimLanesOther, claimArgs...).Query(scan)
}
