-- 014: a claim and a flight's Acks of keys of lanes (migrations 009 and
-- 012) in two set-based statements each, whatever the number of leases,
-- where claim_lanes and finish_lanes run several statements per lease.
-- Run inside the migration's transaction with search_path set to the
-- store's schema; it only creates functions, the same again when run a
-- second time. The functions of 009 and 012 stay as they were, for the
-- instances of the versions before, which may run at the same time: both
-- keep the layout of 009 and lock the same key rows.
--
-- Each function below is PL/pgSQL for one reason: a statement of its own
-- takes a snapshot of its own, after the statement before it locked the
-- key rows, so it reads those keys' lanes and values as they are, which
-- no other transaction can change while the locks are held. One statement
-- that locked the rows and read their lanes would read them as its
-- snapshot saw them, before a transaction that committed meanwhile. The
-- second statement changes the lanes and settles the keys' rows at once:
-- it reads the lanes as they were and adds what it changes (a statement
-- does not see its own changes), where settle_key (012) reads them again.
--
-- Their statements are planned once per session (plan_cache_mode): a
-- custom plan, which PostgreSQL would otherwise make for each call of
-- statements this large, costs more than their run. And that one plan
-- must not read a queue: a generic plan made while the tables were
-- small, when reading a whole table was cheapest, would go on reading it
-- as the queue grows (TestLanesPlansMadeSmallStayBounded). So a statement
-- reaches the rows of keys, lanes and messages only through the
-- (queue, key_hash) of rows it holds already, in a MATERIALIZED CTE (the
-- queue too: compared with the parameter, queue = q would let a plan read
-- the queue's rows by that alone, and key_hash = ANY (hs) is left as a
-- filter of those); and the plan may use nested loops over indexes only,
-- no sequential scan and no hash or merge join.

-- The settled row of a key of lanes, as settle_key (012) writes it, is
-- computed by both functions below from the key's lanes after their
-- change (lanes, lent, live: how many are out, first_lapse and last_lapse:
-- the first and the last deadline of those, and b, the first lane back):
-- a key left without lanes and values is removed, or parked if paused;
-- one left without lanes is a key of one lease again, ready as a key
-- whose batch was acked is; one with lanes is ready when its next batch
-- is (its first lane back, else the values at head, from slot_at on), if
-- it has fewer than per_key lanes out, and at the latest when a lane out
-- lapses; never while held.

-- lease_lanes is claim_lanes (009, 012) in two statements, however many
-- leases it takes: the first locks up to want ready keys of the queue at
-- once, oldest ready first, FOR UPDATE SKIP LOCKED. The second lists the
-- batches each could lease now, in Add order (its lanes back that are
-- ready, up to the first that is not, then, if none is left back, the
-- values from head, up to max_batch each and up to the first not due),
-- up to per_key less its lanes out, and leases them round by round: each
-- key's first batch, in the ready order, then each key's second, and so
-- on, up to want leases in all, as claim_lanes's loop does, where a key
-- that takes a lease is ready again at t, behind the keys already
-- waiting; it settles the keys' rows and returns the leases with their
-- values. A key of one lease is a key of lanes from its first lease here
-- (in a statement between the two, if one is). A key it locks that can
-- lease nothing now (one whose lanes out reach per_key, lower than when
-- it was readied) takes a place of want all the same, where claim_lanes
-- goes on to the next key: the claim leases fewer, and says that the
-- next key is ready now if one is. It returns the rows of claim_lanes, in
-- the order of the leases. A queue with tenants, whose leases each take a
-- tenant's turn, is claim_lanes's.
-- O(want * log K + lanes of the keys locked + values leased), plus the
-- dead entries of keys_ready that every claim steps over.
CREATE OR REPLACE FUNCTION lease_lanes(q text, want integer, max_batch bigint, ttl interval, who bytea, per_key integer)
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
	fold boolean;
	floor timestamptz;
BEGIN
	IF EXISTS (SELECT FROM paused_queues AS pq WHERE pq.queue = q) THEN
		RETURN QUERY SELECT t, NULL::timestamptz, false, ''::bytea, 0, 0::bigint, NULL::bytea[], t;
		RETURN;
	END IF;
	SELECT coalesce(array_agg(p.key_hash ORDER BY p.ready_at, p.key_hash), '{}'),
		coalesce(bool_or(p.lanes = 0 AND (p.batch > 0 OR p.leased_until IS NOT NULL)), false),
		coalesce(min(p.ready_at), '-infinity')
	INTO hs, fold, floor
	FROM (
		SELECT r.key_hash, r.ready_at, r.lanes, r.batch, r.leased_until FROM keys AS r
		WHERE r.queue = q AND r.ready_at <= t AND NOT r.paused
		ORDER BY r.ready_at
		LIMIT want
		FOR UPDATE SKIP LOCKED
	) AS p;
	IF fold THEN
		-- The batch of a key of one lease, kept or lapsed, is its first lane.
		WITH x AS MATERIALIZED (
			SELECT q AS queue, x.h FROM unnest(hs) AS x(h)
		), o AS MATERIALIZED (
			SELECT r.* FROM x JOIN keys AS r ON r.queue = x.queue AND r.key_hash = x.h
			WHERE r.lanes = 0 AND (r.batch > 0 OR r.leased_until IS NOT NULL)
		), lane AS (
			INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, ready_at, retrying, holder, error)
			SELECT q, o.key_hash, o.fence, o.head, o.batch, o.attempt, o.leased_until, o.leased_at, o.ready_at, o.retrying,
				o.holder, o.error
			FROM o
		)
		UPDATE keys AS u SET head = o.head + o.batch, batch = 0, leased_until = NULL, lanes = 1, lent = o.batch
		FROM o WHERE u.queue = o.queue AND u.key_hash = o.key_hash;
	END IF;
	RETURN QUERY
	WITH x AS MATERIALIZED (
		SELECT q AS queue, x.h, x.i FROM unnest(hs) WITH ORDINALITY AS x(h, i)
	), k AS MATERIALIZED (
		SELECT r.queue, r.key_hash, r.key, r.head, r.tail, r.held, r.paused, r.gate, r.burst_due, r.fence, r.leased_at,
			r.holder, r.slot_at, x.i, o.open, c.lanes, c.lent, c.live, c.first_lapse, c.last_lapse,
			-- The values from head that a lease may take: not in an open
			-- burst, and before the first not due.
			CASE WHEN r.gate > t THEN least(r.tail - o.open - r.head, (
				SELECT min(d.seq) - r.head FROM messages AS d
				WHERE d.queue = r.queue AND d.key_hash = r.key_hash AND d.seq >= r.head
					AND d.due_at IS NOT NULL AND d.due_at > t))
				ELSE r.tail - o.open - r.head END AS avail
		FROM x JOIN keys AS r ON r.queue = x.queue AND r.key_hash = x.h
		CROSS JOIN LATERAL (SELECT CASE WHEN r.burst_due <= t THEN 0 ELSE r.burst END AS open) AS o
		CROSS JOIN LATERAL (
			SELECT count(*)::integer AS lanes, coalesce(sum(l.n), 0) AS lent,
				count(*) FILTER (WHERE l.leased_until > t) AS live,
				min(l.leased_until) FILTER (WHERE l.leased_until > t) AS first_lapse,
				max(l.leased_until) FILTER (WHERE l.leased_until > t) AS last_lapse
			FROM lanes AS l WHERE l.queue = r.queue AND l.key_hash = r.key_hash
		) AS c
	), backs AS MATERIALIZED (
		-- The lanes back, in Add order, and whether each is ready with
		-- all before it: a lane back not ready holds up those behind it.
		SELECT l.queue, l.key_hash, l.fence, l.lo, l.n, l.leased_until, l.ready_at, l.retrying,
			l.attempt + CASE WHEN l.leased_until IS NOT NULL THEN 1 ELSE 0 END AS attempt,
			row_number() OVER w - 1 AS j,
			bool_and(l.leased_until IS NOT NULL OR l.ready_at <= t) OVER w AS ok
		FROM k JOIN lanes AS l ON l.queue = k.queue AND l.key_hash = k.key_hash
			AND (l.leased_until IS NULL OR l.leased_until <= t)
		WINDOW w AS (PARTITION BY l.key_hash ORDER BY l.lo)
	), batches AS (
		-- Every batch a key may lease now, the j-th from 0.
		SELECT k.queue, k.i, k.key_hash, b.j, b.fence AS was, b.lo, b.n, b.attempt
		FROM k JOIN backs AS b USING (key_hash)
		WHERE NOT k.held AND b.ok AND b.j < pk - k.live
		UNION ALL
		SELECT k.queue, k.i, k.key_hash, c.n + g.j, NULL, k.head + g.j * c.size, least(c.size, k.avail - g.j * c.size), 1
		FROM k
		CROSS JOIN LATERAL (
			SELECT count(*) AS n, coalesce(bool_and(b.ok), true) AS all_ok, coalesce(max_batch, greatest(k.avail, 1)) AS size
			FROM backs AS b WHERE b.key_hash = k.key_hash
		) AS c
		CROSS JOIN LATERAL generate_series(0, least((k.avail + c.size - 1) / c.size, pk - k.live - c.n) - 1) AS g(j)
		WHERE NOT k.held AND c.all_ok AND k.avail > 0
	), chosen AS MATERIALIZED (
		SELECT b.* FROM batches AS b ORDER BY b.j, b.i LIMIT want
	), fenced AS MATERIALIZED (
		-- Fences in the order of the leases, so each key's grow.
		SELECT c.*, nextval('fences') AS f FROM chosen AS c ORDER BY c.j, c.i
	), again AS (
		UPDATE lanes AS l SET fence = f.f, attempt = f.attempt, leased_until = until, leased_at = t, ready_at = NULL,
			retrying = false, holder = who
		FROM fenced AS f
		WHERE f.was IS NOT NULL AND l.queue = f.queue AND l.key_hash = f.key_hash AND l.fence = f.was
	), fresh AS (
		INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, holder)
		SELECT q, f.key_hash, f.f, f.lo, f.n, 1, until, t, who FROM fenced AS f WHERE f.was IS NULL
	), s AS MATERIALIZED (
		-- Each key locked, with its lanes as they are once leased.
		SELECT k.queue, k.key_hash, k.tail, k.paused, k.held, k.gate, k.burst_due, k.open, pk AS per_key,
			k.head + coalesce(m.fresh_n, 0) AS head,
			coalesce(m.top, k.fence) AS fence,
			CASE WHEN m.top IS NULL THEN k.leased_at ELSE t END AS leased_at,
			CASE WHEN m.top IS NULL THEN k.holder ELSE who END AS holder,
			CASE WHEN m.top IS NULL THEN k.slot_at ELSE t END AS slot_at,
			k.lanes + coalesce(m.fresh, 0) AS lanes,
			k.lent + coalesce(m.fresh_n, 0) AS lent,
			k.live + coalesce(m.leases, 0) AS live,
			CASE WHEN m.top IS NULL THEN k.first_lapse ELSE least(k.first_lapse, until) END AS first_lapse,
			CASE WHEN m.top IS NULL THEN k.last_lapse ELSE greatest(k.last_lapse, until) END AS last_lapse,
			b.lo IS NOT NULL AS back, b.leased_until AS b_until, b.ready_at AS b_ready, b.retrying AS b_retrying,
			m.top IS NOT NULL AS leased
		FROM k
		LEFT JOIN (
			SELECT f.key_hash, count(*) AS leases, count(*) FILTER (WHERE f.was IS NOT NULL) AS again,
				count(*) FILTER (WHERE f.was IS NULL) AS fresh, sum(f.n) FILTER (WHERE f.was IS NULL) AS fresh_n,
				max(f.f) AS top
			FROM fenced AS f GROUP BY f.key_hash
		) AS m USING (key_hash)
		-- Its first lane back once leased: the lanes back leased here are
		-- the first, in Add order.
		LEFT JOIN backs AS b ON b.key_hash = k.key_hash AND b.j = coalesce(m.again, 0)
	), n AS MATERIALIZED (
		SELECT s.*, s.lanes = 0 AND s.tail = s.head AS empty,
			CASE WHEN s.back OR s.live >= s.per_key THEN 1 ELSE 0 END AS flag,
			CASE WHEN s.lanes = 0 AND s.tail = s.head THEN 'infinity'
				WHEN s.held THEN NULL
				WHEN s.lanes > 0 THEN coalesce(CASE WHEN s.live >= s.per_key THEN s.first_lapse
					ELSE least(CASE
						WHEN s.back THEN coalesce(s.b_until, s.b_ready)
						WHEN s.tail - s.head > s.open THEN greatest(s.slot_at, CASE WHEN s.gate > t THEN (
							SELECT d.due_at FROM messages AS d
							WHERE d.queue = s.queue AND d.key_hash = s.key_hash AND d.seq = s.head) END)
						WHEN s.open > 0 THEN s.burst_due END, s.first_lapse) END, 'infinity')
				WHEN s.tail - s.head <= s.open THEN s.burst_due
				WHEN s.gate > t THEN greatest(t, (SELECT d.due_at FROM messages AS d
					WHERE d.queue = s.queue AND d.key_hash = s.key_hash AND d.seq = s.head))
				ELSE t END AS ready_at
		FROM s
	), gone AS (
		DELETE FROM keys AS d USING n
		WHERE d.queue = n.queue AND d.key_hash = n.key_hash AND n.empty AND NOT n.paused
	), kept AS (
		UPDATE keys AS u SET
			per_key = CASE WHEN n.empty THEN u.per_key ELSE n.per_key END,
			head = n.head,
			fence = CASE WHEN n.empty THEN 0 ELSE n.fence END,
			leased_at = CASE WHEN n.empty THEN u.leased_at ELSE n.leased_at END,
			holder = CASE WHEN n.empty THEN NULL ELSE n.holder END,
			slot_at = CASE WHEN n.empty THEN u.slot_at ELSE n.slot_at END,
			batch = CASE WHEN n.lanes = 0 THEN 0 ELSE n.flag END,
			attempt = CASE WHEN n.lanes = 0 THEN 1 ELSE u.attempt END,
			burst = CASE WHEN n.empty THEN 0 ELSE n.open END,
			burst_capped = CASE WHEN n.empty THEN false ELSE u.burst_capped END,
			gate = CASE WHEN n.empty THEN NULL ELSE u.gate END,
			leased_until = NULL,
			held = CASE WHEN n.empty THEN false ELSE u.held END,
			held_at = CASE WHEN n.empty THEN NULL ELSE u.held_at END,
			retrying = CASE WHEN n.lanes = 0 THEN false
				ELSE coalesce(n.b_retrying AND n.b_until IS NULL AND n.b_ready > t, false) END,
			error = CASE WHEN n.empty THEN NULL WHEN n.lanes = 0 THEN CASE WHEN u.held THEN u.error END ELSE u.error END,
			ready_at = n.ready_at,
			lanes = n.lanes,
			lent = n.lent,
			out_until = n.last_lapse
		FROM n
		WHERE u.queue = n.queue AND u.key_hash = n.key_hash AND NOT (n.empty AND NOT n.paused)
	)
	SELECT t,
		-- The next key ready: one not locked here, from the first that
		-- was (see claimFloorSQL in queries.go: the dead entries before
		-- it, which the first statement stepped over, are not walked
		-- again), or one leased here.
		least((SELECT r.ready_at FROM keys AS r
			WHERE r.queue = q AND r.ready_at IS NOT NULL AND NOT r.paused AND r.ready_at >= floor
				AND r.key_hash <> ALL (hs)
			ORDER BY r.ready_at LIMIT 1), (SELECT min(n.ready_at) FROM n WHERE n.leased)),
		f.f IS NOT NULL, coalesce(k.key, ''::bytea), coalesce(f.attempt, 0), coalesce(f.f, 0),
		(SELECT array_agg(m.value ORDER BY m.seq) FROM messages AS m
			WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq >= f.lo AND m.seq < f.lo + f.n),
		coalesce((SELECT m.added_at FROM messages AS m WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq = f.lo), t)
	FROM (VALUES (1)) AS one(x)
	LEFT JOIN (fenced AS f JOIN k USING (key_hash)) ON true
	ORDER BY f.j, f.i;
END $$;

-- ack_lanes is finish_lanes (012) in two statements, however many lanes
-- it ends: the first locks the keys of kks that no other transaction
-- holds, at once, FOR UPDATE SKIP LOCKED; the second ends the lanes of
-- fences fs of those keys that are out, removing their values, counts
-- them off in slot, the session's slot of removals in counts, and
-- settles the keys' rows. It returns what finish_lanes does, and sets
-- pgstore.leases as it does. O(lanes of the keys + values acked).
CREATE OR REPLACE FUNCTION ack_lanes(q text, kks bytea[], fs bigint[], wants integer[], slot integer)
RETURNS TABLE (i bigint, more boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
	SET enable_hashjoin = off SET enable_mergejoin = off AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	hs bytea[];
	ended bigint[];
	mores boolean[];
	leases bigint;
BEGIN
	WITH x AS MATERIALIZED (
		SELECT DISTINCT q AS queue, sha256(x.kk) AS h, x.kk FROM unnest(kks) AS x(kk)
	)
	SELECT coalesce(array_agg(z.key_hash), '{}') INTO hs FROM (
		SELECT r.key_hash FROM x JOIN keys AS r ON r.queue = x.queue AND r.key_hash = x.h AND r.key = x.kk
		FOR UPDATE OF r SKIP LOCKED
	) AS z;
	WITH x AS MATERIALIZED (
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
	), s AS MATERIALIZED (
		-- Each key of a lane ended, with its lanes but those.
		SELECT r.queue, r.key_hash, r.tail, r.paused, r.held, r.gate, r.burst_due,
			CASE WHEN r.burst_due <= t THEN 0 ELSE r.burst END AS open,
			r.per_key, r.head, r.fence, r.leased_at, r.holder, t AS slot_at,
			c.lanes, c.lent, c.live, c.first_lapse, c.last_lapse,
			b.lo IS NOT NULL AS back, b.leased_until AS b_until, b.ready_at AS b_ready, b.retrying AS b_retrying
		FROM (SELECT e.queue, e.key_hash, array_agg(e.fence) AS fences FROM ends AS e GROUP BY e.queue, e.key_hash) AS e
		JOIN keys AS r ON r.queue = e.queue AND r.key_hash = e.key_hash
		CROSS JOIN LATERAL (
			SELECT count(*)::integer AS lanes, coalesce(sum(l.n), 0) AS lent,
				count(*) FILTER (WHERE l.leased_until > t) AS live,
				min(l.leased_until) FILTER (WHERE l.leased_until > t) AS first_lapse,
				max(l.leased_until) FILTER (WHERE l.leased_until > t) AS last_lapse
			FROM lanes AS l WHERE l.queue = r.queue AND l.key_hash = r.key_hash AND l.fence <> ALL (e.fences)
		) AS c
		LEFT JOIN LATERAL (
			-- Its first lane back: none of those ended, which were out.
			SELECT l.lo, l.leased_until, l.ready_at, l.retrying FROM lanes AS l
			WHERE l.queue = r.queue AND l.key_hash = r.key_hash AND (l.leased_until IS NULL OR l.leased_until <= t)
			ORDER BY l.lo LIMIT 1
		) AS b ON true
	), n AS MATERIALIZED (
		SELECT s.*, s.lanes = 0 AND s.tail = s.head AS empty,
			CASE WHEN s.back OR s.live >= s.per_key THEN 1 ELSE 0 END AS flag,
			CASE WHEN s.lanes = 0 AND s.tail = s.head THEN 'infinity'
				WHEN s.held THEN NULL
				WHEN s.lanes > 0 THEN coalesce(CASE WHEN s.live >= s.per_key THEN s.first_lapse
					ELSE least(CASE
						WHEN s.back THEN coalesce(s.b_until, s.b_ready)
						WHEN s.tail - s.head > s.open THEN greatest(s.slot_at, CASE WHEN s.gate > t THEN (
							SELECT d.due_at FROM messages AS d
							WHERE d.queue = s.queue AND d.key_hash = s.key_hash AND d.seq = s.head) END)
						WHEN s.open > 0 THEN s.burst_due END, s.first_lapse) END, 'infinity')
				WHEN s.tail - s.head <= s.open THEN s.burst_due
				WHEN s.gate > t THEN greatest(t, (SELECT d.due_at FROM messages AS d
					WHERE d.queue = s.queue AND d.key_hash = s.key_hash AND d.seq = s.head))
				ELSE t END AS ready_at
		FROM s
	), gone AS (
		DELETE FROM keys AS d USING n
		WHERE d.queue = n.queue AND d.key_hash = n.key_hash AND n.empty AND NOT n.paused
	), kept AS (
		UPDATE keys AS u SET
			per_key = CASE WHEN n.empty THEN u.per_key ELSE n.per_key END,
			head = n.head,
			fence = CASE WHEN n.empty THEN 0 ELSE n.fence END,
			leased_at = CASE WHEN n.empty THEN u.leased_at ELSE n.leased_at END,
			holder = CASE WHEN n.empty THEN NULL ELSE n.holder END,
			slot_at = CASE WHEN n.empty THEN u.slot_at ELSE n.slot_at END,
			batch = CASE WHEN n.lanes = 0 THEN 0 ELSE n.flag END,
			attempt = CASE WHEN n.lanes = 0 THEN 1 ELSE u.attempt END,
			burst = CASE WHEN n.empty THEN 0 ELSE n.open END,
			burst_capped = CASE WHEN n.empty THEN false ELSE u.burst_capped END,
			gate = CASE WHEN n.empty THEN NULL ELSE u.gate END,
			leased_until = NULL,
			held = CASE WHEN n.empty THEN false ELSE u.held END,
			held_at = CASE WHEN n.empty THEN NULL ELSE u.held_at END,
			retrying = CASE WHEN n.lanes = 0 THEN false
				ELSE coalesce(n.b_retrying AND n.b_until IS NULL AND n.b_ready > t, false) END,
			error = CASE WHEN n.empty THEN NULL WHEN n.lanes = 0 THEN CASE WHEN u.held THEN u.error END ELSE u.error END,
			ready_at = n.ready_at,
			lanes = n.lanes,
			lent = n.lent,
			out_until = n.last_lapse
		FROM n
		WHERE u.queue = n.queue AND u.key_hash = n.key_hash AND NOT (n.empty AND NOT n.paused)
	)
	SELECT array_agg(e.i ORDER BY e.i), array_agg(NOT n.empty ORDER BY e.i), sum(e.w)
	INTO ended, mores, leases
	FROM ends AS e JOIN n USING (key_hash);
	PERFORM set_config('pgstore.leases', coalesce(leases, 0)::text, true);
	RETURN QUERY SELECT e.i, e.more FROM unnest(ended, mores) AS e(i, more);
END $$;
