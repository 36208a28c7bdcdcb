-- 012: the Acks of several leases of keys of lanes (migration 009) in one
-- statement, so that a flight of Acks (sharedfinish.go) ends them together
-- and claims their next leases in the same transaction. Run inside the
-- migration's transaction with search_path set to the store's schema; it
-- only creates functions, or replaces those of 009 with their new forms,
-- the same again when run a second time.

-- settle_key is settle_lanes (009) for a caller that holds the lock of the
-- key's row k, read when it took the lock, and changed in memory: it
-- writes k's per_key, head, fence, leased_at, holder and slot_at in the
-- one UPDATE that settles the key at t, where settle_lanes reads the row
-- again and the caller writes it once more. It returns whether the key
-- has values left (in lanes, or from head to tail).
CREATE OR REPLACE FUNCTION settle_key(k keys, t timestamptz) RETURNS boolean
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	q text := k.queue;
	h bytea := k.key_hash;
	c record;
	b record;
	open bigint;
	nxt timestamptz;
	rdy timestamptz;
	flag integer := 0;
BEGIN
	open := CASE WHEN k.burst_due <= t THEN 0 ELSE k.burst END;
	SELECT count(*) AS lanes, coalesce(sum(l.n), 0) AS lent,
		count(*) FILTER (WHERE l.leased_until > t) AS live,
		min(l.leased_until) FILTER (WHERE l.leased_until > t) AS first_lapse,
		max(l.leased_until) FILTER (WHERE l.leased_until > t) AS last_lapse
	INTO c FROM lanes AS l WHERE l.queue = q AND l.key_hash = h;
	IF c.lanes = 0 THEN
		IF k.tail = k.head THEN
			IF k.paused THEN
				UPDATE keys SET head = k.tail, batch = 0, attempt = 1, burst = 0, burst_capped = false, gate = NULL,
					leased_until = NULL, fence = 0, holder = NULL, held = false, held_at = NULL,
					retrying = false, error = NULL, ready_at = 'infinity',
					lanes = 0, lent = 0, out_until = NULL
				WHERE queue = q AND key_hash = h;
			ELSE
				DELETE FROM keys WHERE queue = q AND key_hash = h;
			END IF;
			RETURN false;
		END IF;
		UPDATE keys SET per_key = k.per_key, head = k.head, fence = k.fence, leased_at = k.leased_at, holder = k.holder,
			slot_at = k.slot_at, batch = 0, attempt = 1, burst = open, leased_until = NULL, retrying = false,
			lanes = 0, lent = 0, out_until = NULL,
			error = CASE WHEN k.held THEN k.error END,
			ready_at = CASE WHEN k.held THEN NULL
				WHEN k.tail - k.head <= open THEN k.burst_due
				WHEN k.gate > t THEN greatest(t, (SELECT d.due_at FROM messages AS d
					WHERE d.queue = q AND d.key_hash = h AND d.seq = k.head))
				ELSE t END
		WHERE queue = q AND key_hash = h;
		RETURN true;
	END IF;
	SELECT * INTO b FROM lanes AS l
	WHERE l.queue = q AND l.key_hash = h AND (l.leased_until IS NULL OR l.leased_until <= t)
	ORDER BY l.lo LIMIT 1;
	IF FOUND THEN
		flag := 1;
		nxt := CASE WHEN b.leased_until IS NOT NULL THEN b.leased_until ELSE b.ready_at END;
	ELSIF k.tail - k.head > open THEN
		nxt := greatest(k.slot_at, CASE WHEN k.gate > t THEN (SELECT d.due_at FROM messages AS d
			WHERE d.queue = q AND d.key_hash = h AND d.seq = k.head) END);
	ELSIF open > 0 THEN
		nxt := k.burst_due;
	END IF;
	IF c.live >= k.per_key THEN
		flag := 1;
		rdy := c.first_lapse;
	ELSE
		rdy := least(nxt, c.first_lapse);
	END IF;
	UPDATE keys SET per_key = k.per_key, head = k.head, fence = k.fence, leased_at = k.leased_at, holder = k.holder,
			slot_at = k.slot_at, batch = flag, burst = open, leased_until = NULL,
		lanes = c.lanes, lent = c.lent, out_until = c.last_lapse,
		retrying = coalesce(b.retrying AND b.leased_until IS NULL AND b.ready_at > t, false),
		ready_at = CASE WHEN k.held THEN NULL ELSE coalesce(rdy, 'infinity') END
	WHERE queue = q AND key_hash = h;
	RETURN true;
END $$;


-- finish_lanes acks the lanes of fences fs of keys kks, those out: it
-- removes their values, as finish_lane does with kind 1, and counts them
-- off in slot, the session's slot of removals in counts, once for all. It
-- never waits for the row lock of a key: a lane whose key row another
-- transaction holds is left as it is, as is a lane not out. It returns a
-- row per lane it ended, with its place i in kks (from 1) and whether its
-- key has values left, and sets pgstore.leases to the sum of the wants of
-- those lanes, for the claim that follows it in the transaction
-- (claim_lanes with current_setting('pgstore.leases')). O(lanes of the
-- keys + values acked).
CREATE OR REPLACE FUNCTION finish_lanes(q text, kks bytea[], fs bigint[], wants integer[], slot integer)
RETURNS TABLE (i bigint, more boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	j integer;
	h bytea;
	k keys;
	l record;
	removed bigint := 0;
	leases integer := 0;
BEGIN
	FOR j IN 1 .. coalesce(cardinality(kks), 0) LOOP
		h := sha256(kks[j]);
		SELECT * INTO k FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND r.key = kks[j] FOR UPDATE SKIP LOCKED;
		CONTINUE WHEN NOT FOUND;
		DELETE FROM lanes AS x WHERE x.queue = q AND x.key_hash = h AND x.fence = fs[j] AND x.leased_until > t
		RETURNING x.lo, x.n INTO l;
		CONTINUE WHEN NOT FOUND;
		DELETE FROM messages AS m WHERE m.queue = q AND m.key_hash = h AND m.seq >= l.lo AND m.seq < l.lo + l.n;
		removed := removed + l.n;
		leases := leases + coalesce(wants[j], 0);
		k.slot_at := t;
		i := j;
		more := settle_key(k, t);
		RETURN NEXT;
	END LOOP;
	IF removed > 0 THEN
		INSERT INTO counts AS c (queue, slot, n) VALUES (q, slot, -removed)
		ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
	END IF;
	PERFORM set_config('pgstore.leases', leases::text, true);
END $$;

-- claim_lanes as in 009, in fewer statements: the scan of the queue's
-- ready keys follows the index of the ready order alone (keys_ready, or
-- keys_tenant_ready for a tenant's turn), with one statement per kind of
-- turn rather than one whose plan must serve all three, and ties of
-- ready_at are taken in the index's order rather than sorted by key_hash;
-- a key it leases is written once, by settle_key, not four times.
-- O(want * (keys skipped + lanes of a key)).
CREATE OR REPLACE FUNCTION claim_lanes(q text, want integer, max_batch bigint, ttl interval, who bytea, per_key integer,
	fair boolean)
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
		IF k.lanes = 0 AND (k.batch > 0 OR k.leased_until IS NOT NULL) THEN
			-- The batch of a key of one lease, kept or lapsed, is its first lane.
			INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, ready_at, retrying, holder, error)
			VALUES (q, k.key_hash, k.fence, k.head, k.batch, k.attempt, k.leased_until, k.leased_at, k.ready_at, k.retrying, k.holder, k.error);
			UPDATE keys SET head = k.head + k.batch, batch = 0, leased_until = NULL, lanes = 1, lent = k.batch
			WHERE queue = q AND key_hash = k.key_hash;
			k.head := k.head + k.batch;
		END IF;
		k.per_key := greatest(claim_lanes.per_key, 1);
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

