-- 015: a rate limit per key that the claims keep (store.KeyRate). Run
-- inside the migration's transaction with search_path set to the store's
-- schema; each step does nothing, or the same again, when run a second
-- time. It adds two columns, a table and functions, and changes none of
-- the functions before, which the instances of the versions before call
-- as they did.
--
-- A key's theoretical arrival time T (GCRA): a claim with a KeyRate of
-- interval I and tolerance tol = (Burst-1)*I may lease the key at now if
-- T <= now + tol, and then sets T to max(T, now) + I. T lives in the
-- key's row (rate_t, with the tol of the claim that set it, rate_tol),
-- written by the UPDATE that leases, and, from a lease of the key's last
-- values on, in key_rates too, which outlives the key's row in keys, which
-- goes when the key empties: a row of keys without rate_t (made since the
-- key emptied) reads T there. A key without T has a full bucket, as one
-- whose T passed has: so a row of key_rates whose T passed may go at any
-- time (the Store sweeps them). The new columns, NULL in every row, cost
-- no rewrite, and no statement of the versions before reads them.
ALTER TABLE keys
	ADD COLUMN IF NOT EXISTS rate_t   timestamptz,
	ADD COLUMN IF NOT EXISTS rate_tol interval;

-- key_rates is UNLOGGED: its writes cost no WAL, and a crash of the server
-- (not a clean restart) empties it, which leaves the buckets of the keys
-- that emptied full, as after a quiet time. No statement of AddTx or of a
-- Finish reads or writes it, and no other table refers to it. Each lease
-- of a key's last values rewrites its key's row: the room that fillfactor
-- leaves in each page lets the new version go in the page of the old one
-- (HOT), with no new entry in the index. tol is the tolerance of the
-- KeyRate that set t: a key deferred for its token is ready at t - tol,
-- which tells it from a key deferred by a Finish (store.KeyInfo.ForToken).
CREATE UNLOGGED TABLE IF NOT EXISTS key_rates (
	queue    text        NOT NULL,
	key_hash bytea       NOT NULL,
	t        timestamptz NOT NULL,
	tol      interval    NOT NULL,
	PRIMARY KEY (queue, key_hash)
) WITH (fillfactor = 50);

-- defer_for_token defers key h of queue q, whose row the caller holds
-- locked, ready and without a token, until at, as a Finish with Defer
-- would leave it: a key of one lease keeps its head batch (the one a
-- lease would take now, up to max_batch, if none was kept), with no lease
-- out and no attempt counted for the deferral (a lapsed lease counts its
-- attempt now, as its next lease would); a key of lanes is only ready
-- later. claimRatedSQL (pgstore's queries) does the same in its statement.
CREATE OR REPLACE FUNCTION defer_for_token(q text, h bytea, at timestamptz, max_batch bigint) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
BEGIN
	UPDATE keys AS u SET
		ready_at = at,
		batch = CASE WHEN u.lanes > 0 OR u.batch > 0 THEN u.batch
			ELSE greatest(least(u.tail - CASE WHEN u.burst_due <= t THEN 0 ELSE u.burst END - u.head, max_batch,
				CASE WHEN u.gate > t THEN (
					SELECT min(d.seq) - u.head FROM messages AS d
					WHERE d.queue = u.queue AND d.key_hash = u.key_hash AND d.seq >= u.head
						AND d.due_at IS NOT NULL AND d.due_at > t) END), 0) END,
		attempt = CASE WHEN u.lanes = 0 AND u.leased_until IS NOT NULL THEN u.attempt + 1 ELSE u.attempt END,
		leased_until = CASE WHEN u.lanes = 0 THEN NULL ELSE u.leased_until END,
		retrying = CASE WHEN u.lanes = 0 THEN false ELSE u.retrying END
	WHERE u.queue = q AND u.key_hash = h;
END $$;

-- key_tokens is how many leases a key whose t is rt (NULL: none) may take
-- at t0 with a KeyRate of interval rate and tolerance tol: the n for
-- which max(rt, t0) + (n-1)*rate <= t0 + tol, 0 if none.
CREATE OR REPLACE FUNCTION key_tokens(rt timestamptz, t0 timestamptz, rate interval, tol interval) RETURNS bigint
LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN rt > t0 + tol THEN 0
		ELSE (extract(epoch FROM t0 + tol - greatest(rt, t0)) * 1000000)::bigint
			/ greatest((extract(epoch FROM rate) * 1000000)::bigint, 1) + 1 END
$$;

-- lease_lanes_rated is lease_lanes (014) with a KeyRate of interval rate
-- and tolerance tol: it first defers the ready keys without a token among
-- the first want + 8 of the ready order (defer_for_token), then locks up
-- to want ready keys that have one, and leases of each key at most as
-- many batches as it has tokens (key_tokens), one token a lease; a key
-- that leased is ready no sooner than its next token.
CREATE OR REPLACE FUNCTION lease_lanes_rated(q text, want integer, max_batch bigint, ttl interval, who bytea, per_key integer,
	rate interval, tol interval)
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
	t0 timestamptz := statement_timestamp();
BEGIN
	IF EXISTS (SELECT FROM paused_queues AS pq WHERE pq.queue = q) THEN
		RETURN QUERY SELECT t, NULL::timestamptz, false, ''::bytea, 0, 0::bigint, NULL::bytea[], t;
		RETURN;
	END IF;
	-- The ready keys without a token, among the first that a claim of
	-- want keys would step over, wait for their tokens.
	PERFORM defer_for_token(q, d.key_hash, d.rt - lease_lanes_rated.tol, max_batch) FROM (
		-- T as the statement's snapshot sees it; r, locked, only for the
		-- keys without a token, by its primary key alone: its conditions
		-- are in z, which OFFSET 0 keeps a subquery of its own, so that
		-- no plan walks keys_ready for each key of x.
		WITH x AS MATERIALIZED (
			SELECT x.queue, x.key_hash, coalesce(x.rate_t, (SELECT kr.t FROM key_rates AS kr
				WHERE kr.queue = x.queue AND kr.key_hash = x.key_hash)) AS rt
			FROM (
				SELECT x.queue, x.key_hash, x.rate_t FROM keys AS x
				WHERE x.queue = q AND x.ready_at <= t0 AND NOT x.paused
				ORDER BY x.ready_at LIMIT want + 8
			) AS x
		)
		SELECT r.key_hash, x.rt FROM x
		JOIN keys AS r ON r.queue = x.queue AND r.key_hash = x.key_hash
		CROSS JOIN LATERAL (SELECT WHERE r.ready_at <= t0 AND NOT r.paused OFFSET 0) AS z
		WHERE x.rt > t0 + lease_lanes_rated.tol
		FOR UPDATE OF r SKIP LOCKED
	) AS d;
	SELECT coalesce(array_agg(p.key_hash ORDER BY p.ready_at, p.key_hash), '{}'),
		coalesce(bool_or(p.lanes = 0 AND (p.batch > 0 OR p.leased_until IS NOT NULL)), false),
		coalesce(min(p.ready_at), '-infinity')
	INTO hs, fold, floor
	FROM (
		SELECT r.key_hash, r.ready_at, r.lanes, r.batch, r.leased_until FROM keys AS r
		WHERE r.queue = q AND r.ready_at <= t0 AND NOT r.paused
			AND coalesce(coalesce(r.rate_t, (SELECT kr.t FROM key_rates AS kr
				WHERE kr.queue = r.queue AND kr.key_hash = r.key_hash)) <= t0 + lease_lanes_rated.tol, true)
		ORDER BY r.ready_at
		LIMIT want
		FOR UPDATE OF r SKIP LOCKED
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
			kt.rt, key_tokens(kt.rt, t0, rate, lease_lanes_rated.tol) AS tokens,
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
		CROSS JOIN LATERAL (
			SELECT coalesce(r.rate_t, (SELECT kr.t FROM key_rates AS kr
				WHERE kr.queue = r.queue AND kr.key_hash = r.key_hash)) AS rt
		) AS kt
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
		WHERE NOT k.held AND b.ok AND b.j < pk - k.live AND b.j < k.tokens
		UNION ALL
		SELECT k.queue, k.i, k.key_hash, c.n + g.j, NULL, k.head + g.j * c.size, least(c.size, k.avail - g.j * c.size), 1
		FROM k
		CROSS JOIN LATERAL (
			SELECT count(*) AS n, coalesce(bool_and(b.ok), true) AS all_ok, coalesce(max_batch, greatest(k.avail, 1)) AS size
			FROM backs AS b WHERE b.key_hash = k.key_hash
		) AS c
		CROSS JOIN LATERAL generate_series(0, least((k.avail + c.size - 1) / c.size, pk - k.live - c.n, k.tokens - c.n) - 1) AS g(j)
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
			m.top IS NOT NULL AS leased,
			-- The key's t once leased: a token each lease.
			CASE WHEN m.top IS NULL THEN k.rt ELSE greatest(k.rt, t0) + m.leases * rate END AS nt
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
	), rated AS (
		INSERT INTO key_rates AS kr (queue, key_hash, t, tol)
		SELECT q, s.key_hash, s.nt, lease_lanes_rated.tol FROM s WHERE s.leased
		ON CONFLICT (queue, key_hash) DO UPDATE SET t = EXCLUDED.t, tol = EXCLUDED.tol
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
			-- Not before its next token.
			ready_at = CASE WHEN n.ready_at IS NOT NULL THEN greatest(n.ready_at, n.nt - lease_lanes_rated.tol) END,
			lanes = n.lanes,
			lent = n.lent,
			out_until = n.last_lapse,
			rate_t = CASE WHEN n.leased THEN n.nt ELSE u.rate_t END,
			rate_tol = CASE WHEN n.leased THEN lease_lanes_rated.tol ELSE u.rate_tol END
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
			ORDER BY r.ready_at LIMIT 1), (SELECT min(greatest(n.ready_at, n.nt - lease_lanes_rated.tol)) FROM n WHERE n.leased)),
		f.f IS NOT NULL, coalesce(k.key, ''::bytea), coalesce(f.attempt, 0), coalesce(f.f, 0),
		(SELECT array_agg(m.value ORDER BY m.seq) FROM messages AS m
			WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq >= f.lo AND m.seq < f.lo + f.n),
		coalesce((SELECT m.added_at FROM messages AS m WHERE m.queue = f.queue AND m.key_hash = f.key_hash AND m.seq = f.lo), t)
	FROM (VALUES (1)) AS one(x)
	LEFT JOIN (fenced AS f JOIN k USING (key_hash)) ON true
	ORDER BY f.j, f.i;
END $$;


-- claim_lanes_rated is claim_lanes (012) with a KeyRate of interval rate
-- and tolerance tol: a key it locks without a token is deferred until its
-- token (defer_for_token), and the turn its tenant took for it given
-- back; each lease takes a token, and a key that leased is ready no
-- sooner than its next.
CREATE OR REPLACE FUNCTION claim_lanes_rated(q text, want integer, max_batch bigint, ttl interval, who bytea, per_key integer,
	fair boolean, rate interval, tol interval)
RETURNS TABLE (o_now timestamptz, o_upcoming timestamptz, o_found boolean, o_key bytea, o_attempt integer,
	o_fence bigint, o_vals bytea[], o_first timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	ks bytea[] := '{}';
	hs bytea[] := '{}';
	atts integer[] := '{}';
	fs bigint[] := '{}';
	los bigint[] := '{}';
	sizes bigint[] := '{}';
	t timestamptz := statement_timestamp();
	until timestamptz := coalesce(statement_timestamp() + ttl, 'infinity');
	k keys;
	b record;
	tried bytea[] := '{}';
	turn text;
	got integer := 0;
	open bigint;
	size bigint;
	f bigint;
	att integer;
	lo bigint;
	out_now integer;
	nxt timestamptz;
	rt timestamptz;
	nt timestamptz;
BEGIN
	IF EXISTS (SELECT FROM paused_queues AS pq WHERE pq.queue = q) THEN
		RETURN QUERY SELECT t, NULL::timestamptz, false, ''::bytea, 0, 0::bigint, NULL::bytea[], t;
		RETURN;
	END IF;
	WHILE got < want LOOP
		IF fair THEN
			turn := pick_tenant(q);
		END IF;
		IF NOT fair THEN
			SELECT * INTO k FROM keys AS r
			WHERE r.queue = q AND r.ready_at <= t AND NOT r.paused AND r.key_hash <> ALL (tried)
			ORDER BY r.ready_at
			LIMIT 1
			FOR UPDATE SKIP LOCKED;
		ELSIF turn IS NULL THEN
			SELECT * INTO k FROM keys AS r
			WHERE r.queue = q AND r.ready_at <= t AND NOT r.paused AND r.key_hash <> ALL (tried) AND r.tenant IS NULL
			ORDER BY r.ready_at
			LIMIT 1
			FOR UPDATE SKIP LOCKED;
		ELSE
			SELECT * INTO k FROM keys AS r
			WHERE r.queue = q AND r.tenant = turn AND r.ready_at <= t AND NOT r.paused AND r.key_hash <> ALL (tried)
			ORDER BY r.ready_at
			LIMIT 1
			FOR UPDATE SKIP LOCKED;
		END IF;
		EXIT WHEN NOT FOUND;
		rt := coalesce(k.rate_t, (SELECT kr.t FROM key_rates AS kr WHERE kr.queue = q AND kr.key_hash = k.key_hash));
		IF rt > t + tol THEN
			-- No token: the key waits for it, and its tenant gets back
			-- the turn it took.
			PERFORM defer_for_token(q, k.key_hash, rt - tol, max_batch);
			IF turn IS NOT NULL THEN
				UPDATE tenants AS tn SET vtime = tn.vtime - 1.0 / tn.weight, last = tn.last - 1.0 / tn.weight
				WHERE tn.queue = q AND tn.tenant = turn;
			END IF;
			tried := tried || k.key_hash;
			CONTINUE;
		END IF;
		IF k.lanes = 0 AND (k.batch > 0 OR k.leased_until IS NOT NULL) THEN
			-- The batch of a key of one lease, kept or lapsed, is its first lane.
			INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, ready_at, retrying, holder, error)
			VALUES (q, k.key_hash, k.fence, k.head, k.batch, k.attempt, k.leased_until, k.leased_at, k.ready_at, k.retrying, k.holder, k.error);
			UPDATE keys SET head = k.head + k.batch, batch = 0, leased_until = NULL, lanes = 1, lent = k.batch
			WHERE queue = q AND key_hash = k.key_hash;
			k.head := k.head + k.batch;
		END IF;
		k.per_key := greatest(claim_lanes_rated.per_key, 1);
		SELECT count(*) INTO out_now FROM lanes AS l WHERE l.queue = q AND l.key_hash = k.key_hash AND l.leased_until > t;
		SELECT * INTO b FROM lanes AS l
		WHERE l.queue = q AND l.key_hash = k.key_hash AND (l.leased_until IS NULL OR l.leased_until <= t)
		ORDER BY l.lo LIMIT 1;
		f := NULL;
		IF k.held OR out_now >= k.per_key THEN
			NULL;
		ELSIF b.fence IS NOT NULL THEN
			IF b.leased_until IS NOT NULL OR b.ready_at <= t THEN
				f := nextval('fences');
				att := b.attempt + CASE WHEN b.leased_until IS NOT NULL THEN 1 ELSE 0 END;
				UPDATE lanes AS l SET fence = f, attempt = att, leased_until = until, leased_at = t, ready_at = NULL,
					retrying = false, holder = who
				WHERE l.queue = q AND l.key_hash = k.key_hash AND l.fence = b.fence;
				lo := b.lo;
				size := b.n;
			END IF;
		ELSE
			open := CASE WHEN k.burst_due <= t THEN 0 ELSE k.burst END;
			size := least(k.tail - open - k.head, max_batch);
			IF k.gate > t THEN
				size := least(size, (SELECT min(d.seq) - k.head FROM messages AS d
					WHERE d.queue = q AND d.key_hash = k.key_hash AND d.seq >= k.head
						AND d.due_at IS NOT NULL AND d.due_at > t));
			END IF;
			IF size > 0 THEN
				f := nextval('fences');
				att := 1;
				lo := k.head;
				INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, holder)
				VALUES (q, k.key_hash, f, lo, size, 1, until, t, who);
				k.head := k.head + size;
			END IF;
		END IF;
		IF f IS NULL THEN
			tried := tried || k.key_hash;
		ELSE
			nt := greatest(rt, t) + rate;
			INSERT INTO key_rates AS kr (queue, key_hash, t, tol) VALUES (q, k.key_hash, nt, claim_lanes_rated.tol)
			ON CONFLICT (queue, key_hash) DO UPDATE SET t = EXCLUDED.t, tol = EXCLUDED.tol;
			got := got + 1;
			k.fence := f;
			k.leased_at := t;
			k.holder := who;
			k.slot_at := t;
			ks := ks || k.key;
			hs := hs || k.key_hash;
			atts := atts || att;
			fs := fs || f;
			los := los || lo;
			sizes := sizes || size;
		END IF;
		PERFORM settle_key(k, t);
		IF f IS NOT NULL THEN
			-- T in the key's row, which is not ready before its next token.
			UPDATE keys AS u SET rate_t = nt, rate_tol = claim_lanes_rated.tol,
				ready_at = CASE WHEN u.ready_at < nt - claim_lanes_rated.tol THEN nt - claim_lanes_rated.tol ELSE u.ready_at END
			WHERE u.queue = q AND u.key_hash = k.key_hash;
		END IF;
	END LOOP;
	SELECT r.ready_at INTO nxt FROM keys AS r
	WHERE r.queue = q AND r.ready_at IS NOT NULL AND NOT r.paused AND r.key_hash <> ALL (tried)
	ORDER BY r.ready_at LIMIT 1;
	IF got = 0 THEN
		RETURN QUERY SELECT t, nxt, false, ''::bytea, 0, 0::bigint, NULL::bytea[], t;
		RETURN;
	END IF;
	RETURN QUERY SELECT t, nxt, true, x.k, x.a, x.f,
		(SELECT array_agg(m.value ORDER BY m.seq) FROM messages AS m
			WHERE m.queue = q AND m.key_hash = x.h AND m.seq >= x.lo AND m.seq < x.lo + x.n),
		coalesce((SELECT m.added_at FROM messages AS m WHERE m.queue = q AND m.key_hash = x.h AND m.seq = x.lo), t)
	FROM unnest(ks, hs, atts, fs, los, sizes) WITH ORDINALITY AS x(k, h, a, f, lo, n, i)
	ORDER BY x.i;
END $$;

