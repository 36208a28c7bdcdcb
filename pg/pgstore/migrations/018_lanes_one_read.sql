-- 018: lease_free_lanes and ack_last_lanes (016) by fewer steps. Run
-- inside the migration's transaction with search_path set to the store's
-- schema; it only creates functions, the same again when run a second
-- time, and changes none of the functions before, which the instances of
-- the versions before call as they did: these lock, write and return what
-- those do.
--
-- A flight of Acks of lanes calls the two functions; what its server
-- process does beyond a flight of keys of one lease is, besides the row
-- of lanes each lease writes and each Ack removes, steps that these leave
-- out: a lease's values and the first one's time read in two scans of
-- messages, where one does; the Acks' keys made distinct before they are
-- locked, which costs a hash table, where a key asked for twice is
-- locked once anyway; and the Acks' results gathered into arrays, then a
-- statement that sets pgstore.leases and one that returns the arrays'
-- rows, where the statement that ends the lanes can do both.

-- lease_free_lanes_v2 is lease_free_lanes (016), each lease's values and
-- the first one's time read in one scan.
CREATE OR REPLACE FUNCTION lease_free_lanes_v2(q text, want integer, max_batch bigint, ttl interval, who bytea, per_key integer)
RETURNS TABLE (o_now timestamptz, o_upcoming timestamptz, o_found boolean, o_key bytea, o_attempt integer,
	o_fence bigint, o_vals bytea[], o_first timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
	SET enable_hashjoin = off SET enable_mergejoin = off AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	until timestamptz := coalesce(statement_timestamp() + ttl, 'infinity');
	pk integer := greatest(per_key, 1);
	hs bytea[];
	free boolean;
	floor timestamptz;
BEGIN
	IF EXISTS (SELECT FROM paused_queues AS pq WHERE pq.queue = q) THEN
		RETURN QUERY SELECT * FROM lease_lanes(q, want, max_batch, ttl, who, per_key);
		RETURN;
	END IF;
	-- The rows locked are read as they are once locked, and stay so.
	SELECT coalesce(array_agg(p.key_hash ORDER BY p.ready_at, p.key_hash), '{}'),
		coalesce(bool_and(p.lanes = 0 AND p.batch = 0 AND p.leased_until IS NULL AND NOT p.held AND p.tail > p.head
			AND (p.burst = 0 OR p.burst_due <= t) AND (p.gate IS NULL OR p.gate <= t)), true),
		coalesce(min(p.ready_at), '-infinity')
	INTO hs, free, floor
	FROM (
		SELECT r.key_hash, r.ready_at, r.lanes, r.batch, r.leased_until, r.held, r.head, r.tail, r.burst, r.burst_due, r.gate
		FROM keys AS r
		WHERE r.queue = q AND r.ready_at <= t AND NOT r.paused
		ORDER BY r.ready_at
		LIMIT want
		FOR UPDATE SKIP LOCKED
	) AS p;
	IF NOT free THEN
		RETURN QUERY SELECT * FROM lease_lanes(q, want, max_batch, ttl, who, per_key);
		RETURN;
	END IF;
	RETURN QUERY
	WITH x AS MATERIALIZED (
		SELECT q AS queue, x.h, x.i FROM unnest(hs) WITH ORDINALITY AS x(h, i)
	), k AS MATERIALIZED (
		SELECT r.queue, r.key_hash, r.key, r.head, r.tail, x.i, coalesce(max_batch, r.tail - r.head) AS size
		FROM x JOIN keys AS r ON r.queue = x.queue AND r.key_hash = x.h
	), chosen AS MATERIALIZED (
		-- Every batch a key may lease now, the j-th from 0, up to per_key.
		SELECT k.queue, k.i, k.key_hash, g.j, k.head + g.j * k.size AS lo, least(k.size, k.tail - k.head - g.j * k.size) AS n
		FROM k CROSS JOIN LATERAL generate_series(0, least((k.tail - k.head + k.size - 1) / k.size, pk) - 1) AS g(j)
		ORDER BY g.j, k.i
		LIMIT want
	), fenced AS MATERIALIZED (
		-- Fences in the order of the leases, so each key's grow.
		SELECT c.*, nextval('fences') AS f FROM chosen AS c ORDER BY c.j, c.i
	), fresh AS (
		INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, holder)
		SELECT q, f.key_hash, f.f, f.lo, f.n, 1, until, t, who FROM fenced AS f
	), n AS MATERIALIZED (
		-- Each key, with its lanes as they are once leased: all out, and
		-- none back. It is ready now while it may lease more, at the
		-- first lapse otherwise.
		SELECT m.queue, m.key_hash, m.lanes, m.lent, m.top,
			CASE WHEN m.lanes < pk AND k.tail > k.head + m.lent THEN t ELSE until END AS ready_at
		FROM (
			SELECT f.queue, f.key_hash, count(*)::integer AS lanes, sum(f.n) AS lent, max(f.f) AS top
			FROM fenced AS f GROUP BY f.queue, f.key_hash
		) AS m JOIN k USING (key_hash)
	), kept AS (
		UPDATE keys AS u SET per_key = pk, head = u.head + n.lent, fence = n.top, leased_at = t, holder = who, slot_at = t,
			batch = CASE WHEN n.lanes >= pk THEN 1 ELSE 0 END, burst = 0, retrying = false, ready_at = n.ready_at,
			lanes = n.lanes, lent = n.lent, out_until = until
		FROM n
		WHERE u.queue = n.queue AND u.key_hash = n.key_hash
	)
	SELECT t,
		-- The next key ready, as lease_lanes finds it.
		least((SELECT r.ready_at FROM keys AS r
			WHERE r.queue = q AND r.ready_at IS NOT NULL AND NOT r.paused AND r.ready_at >= floor
				AND r.key_hash <> ALL (hs)
			ORDER BY r.ready_at LIMIT 1), (SELECT min(n.ready_at) FROM n)),
		f.f IS NOT NULL, coalesce(k.key, ''::bytea), CASE WHEN f.f IS NULL THEN 0 ELSE 1 END, coalesce(f.f, 0),
		v.vals, coalesce(v.first, t)
	FROM (VALUES (1)) AS one(x)
	LEFT JOIN (fenced AS f JOIN k USING (key_hash) CROSS JOIN LATERAL (
		-- A lease's values and the first one's time, in one read.
		SELECT array_agg(m.value ORDER BY m.seq) AS vals, min(m.added_at) FILTER (WHERE m.seq = f.lo) AS first
		FROM messages AS m
		WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq >= f.lo AND m.seq < f.lo + f.n
	) AS v) ON true
	ORDER BY f.j, f.i;
END $$;

-- ack_last_lanes_v2 is ack_last_lanes (016), its keys locked as given, its
-- rows returned and pgstore.leases set by the statement that ends the
-- lanes.
CREATE OR REPLACE FUNCTION ack_last_lanes_v2(q text, kks bytea[], fs bigint[], wants integer[], slot integer)
RETURNS TABLE (i bigint, more boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
	SET enable_hashjoin = off SET enable_mergejoin = off AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	hs bytea[];
	last boolean;
BEGIN
	WITH x AS MATERIALIZED (
		-- A key given twice is locked once.
		SELECT q AS queue, sha256(x.kk) AS h, x.kk FROM unnest(kks) AS x(kk)
	)
	SELECT coalesce(array_agg(z.key_hash), '{}'), coalesce(bool_and(z.lanes = 1), true) INTO hs, last FROM (
		SELECT r.key_hash, r.lanes FROM x JOIN keys AS r ON r.queue = x.queue AND r.key_hash = x.h AND r.key = x.kk
		FOR UPDATE OF r SKIP LOCKED
	) AS z;
	IF NOT last THEN
		RETURN QUERY SELECT * FROM ack_lanes(q, kks, fs, wants, slot);
		RETURN;
	END IF;
	RETURN QUERY WITH x AS MATERIALIZED (
		SELECT q AS queue, sha256(x.kk) AS h, x.f, x.w, x.i FROM unnest(kks, fs, wants) WITH ORDINALITY AS x(kk, f, w, i)
	), ends AS MATERIALIZED (
		DELETE FROM lanes AS l USING x
		WHERE l.queue = x.queue AND l.key_hash = x.h AND l.fence = x.f AND l.leased_until > t AND x.h = ANY (hs)
		RETURNING l.queue, l.key_hash, l.fence, l.lo, l.n, x.i, x.w
	), removed AS (
		DELETE FROM messages AS m USING ends AS e
		WHERE m.queue = e.queue AND m.key_hash = e.key_hash AND m.seq >= e.lo AND m.seq < e.lo + e.n
	), counted AS (
		INSERT INTO counts AS c (queue, slot, n)
		SELECT q, slot, -sum(e.n) FROM ends AS e HAVING count(*) > 0
		ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n
	), n AS MATERIALIZED (
		-- Each key of a lane ended, without lanes now: empty once it has
		-- no values, else ready as a key of one lease.
		SELECT r.queue, r.key_hash, r.paused, r.tail = r.head AS empty,
			CASE WHEN r.burst_due <= t THEN 0 ELSE r.burst END AS open,
			CASE WHEN r.tail = r.head THEN 'infinity'
				WHEN r.held THEN NULL
				WHEN r.tail - r.head <= CASE WHEN r.burst_due <= t THEN 0 ELSE r.burst END THEN r.burst_due
				WHEN r.gate > t THEN greatest(t, (SELECT d.due_at FROM messages AS d
					WHERE d.queue = r.queue AND d.key_hash = r.key_hash AND d.seq = r.head))
				ELSE t END AS ready_at,
			e.i
		FROM ends AS e JOIN keys AS r ON r.queue = e.queue AND r.key_hash = e.key_hash
	), gone AS (
		DELETE FROM keys AS d USING n
		WHERE d.queue = n.queue AND d.key_hash = n.key_hash AND n.empty AND NOT n.paused
	), kept AS (
		UPDATE keys AS u SET
			fence = CASE WHEN n.empty THEN 0 ELSE u.fence END,
			holder = CASE WHEN n.empty THEN NULL ELSE u.holder END,
			slot_at = CASE WHEN n.empty THEN u.slot_at ELSE t END,
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
	), s AS MATERIALIZED (
		SELECT set_config('pgstore.leases', coalesce(sum(e.w), 0)::text, true) AS leases FROM ends AS e
	)
	-- The condition on s, which names no row of n, is a one-time filter,
	-- checked before n is read: pgstore.leases is set whether or not a
	-- lane ended.
	SELECT n.i, NOT n.empty FROM n WHERE (SELECT s.leases FROM s) IS NOT NULL ORDER BY n.i;
END $$;
