-- 009: several leases of one key at once (store.ClaimParams.PerKey). Run
-- inside the migration's transaction with search_path set to the store's
-- schema; each step does nothing, or the same again, when run a second
-- time; its functions keep that search_path. New columns with a constant default cost no rewrite, and their
-- defaults say what every row a version before this one wrote is: a key
-- of one lease at a time.
--
-- A key leased by a claim with PerKey > 1 keeps each of its batches that
-- is out, or came back (a lapse, a Retry, a Defer, a Hold), as a row of
-- lanes; its row in keys then holds, of the columns of a key of one lease:
-- head, the first value that no lane holds (every value before it is in a
-- lane, or gone); batch, 1 while the key may take no lease of a value at
-- head (it has PerKey leases out, or a lane came back), else 0, so that
-- the Adds, which read it as the size of a kept batch, make the key ready
-- when it is not so; leased_until NULL, so that no statement of a key of
-- one lease finds a lease of it; fence, the last lease's. Once its last
-- lane ends, the key is a key of one lease again.

-- per_key: the PerKey of the claim that leased the key last; lanes: its
-- rows in lanes; lent: the values they hold; out_until: the latest
-- deadline of its lanes out; slot_at: when one of its leases was last
-- taken or ended, from when a batch of values at head is ready.
ALTER TABLE keys
	ADD COLUMN IF NOT EXISTS per_key   integer NOT NULL DEFAULT 1,
	ADD COLUMN IF NOT EXISTS lanes     integer NOT NULL DEFAULT 0,
	ADD COLUMN IF NOT EXISTS lent      bigint  NOT NULL DEFAULT 0,
	ADD COLUMN IF NOT EXISTS out_until timestamptz,
	ADD COLUMN IF NOT EXISTS slot_at   timestamptz;

-- lanes holds a batch of a key of several leases: the values of seq lo to
-- lo+n-1, out on the lease of fence until leased_until, or back (lapsed
-- once leased_until passed, or leased_until NULL) and ready at ready_at
-- (NULL while its key is held). attempt is the lease's while out, the
-- next one while back after a Retry or a Defer; a lapsed lane counts its
-- next attempt when leased again.
CREATE TABLE IF NOT EXISTS lanes (
	queue        text        NOT NULL,
	key_hash     bytea       NOT NULL,
	fence        bigint      NOT NULL,
	lo           bigint      NOT NULL,
	n            integer     NOT NULL,
	attempt      integer     NOT NULL,
	leased_until timestamptz,
	leased_at    timestamptz,
	ready_at     timestamptz,
	retrying     boolean     NOT NULL DEFAULT false,
	holder       bytea,
	error        bytea,
	PRIMARY KEY (queue, key_hash, fence)
);

CREATE INDEX IF NOT EXISTS lanes_by_lo ON lanes (queue, key_hash, lo);

-- settle_lanes sets the row of a key of several leases, locked by the
-- caller, from its lanes at t, as the comment of 009 says: the key is
-- ready when its next batch is (its first lane back, else the values at
-- head, from slot_at on), if it has fewer than per_key lanes out, and at
-- the latest when a lane out lapses; never while held. A key left without
-- lanes is a key of one lease again, ready as a key whose batch was acked
-- is, or is removed, or parked if paused, once it holds no values.
CREATE OR REPLACE FUNCTION settle_lanes(q text, h bytea, t timestamptz) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	k record;
	c record;
	b record;
	open bigint;
	nxt timestamptz;
	rdy timestamptz;
	flag integer := 0;
BEGIN
	SELECT * INTO k FROM keys WHERE queue = q AND key_hash = h;
	IF NOT FOUND THEN
		RETURN;
	END IF;
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
			RETURN;
		END IF;
		UPDATE keys SET batch = 0, attempt = 1, burst = open, leased_until = NULL, retrying = false,
			lanes = 0, lent = 0, out_until = NULL,
			error = CASE WHEN k.held THEN k.error END,
			ready_at = CASE WHEN k.held THEN NULL
				WHEN k.tail - k.head <= open THEN k.burst_due
				WHEN k.gate > t THEN greatest(t, (SELECT d.due_at FROM messages AS d
					WHERE d.queue = q AND d.key_hash = h AND d.seq = k.head))
				ELSE t END
		WHERE queue = q AND key_hash = h;
		RETURN;
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
	UPDATE keys SET batch = flag, burst = open, leased_until = NULL,
		lanes = c.lanes, lent = c.lent, out_until = c.last_lapse,
		retrying = coalesce(b.retrying AND b.leased_until IS NULL AND b.ready_at > t, false),
		ready_at = CASE WHEN k.held THEN NULL ELSE coalesce(rdy, 'infinity') END
	WHERE queue = q AND key_hash = h;
END $$;

-- claim_lanes leases up to want batches of a queue's ready keys, oldest
-- ready first, each key up to per_key at once: a key that takes a lease
-- is ready again at t, behind the keys already waiting. It locks key rows
-- only, skipping those another transaction holds. A key of one lease is a
-- key of lanes from its first lease here: its batch kept or out, if any,
-- becomes its first lane. In a queue with tenants (fair, migration 008),
-- each lease takes the turn of a tenant (pick_tenant) and a key of that
-- tenant; when no tenant has a key ready, a key outside the turns. It returns the rows of the claim statement of
-- the store (claimSQL), in the order of the leases.
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
	k record;
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
		SELECT * INTO k FROM keys AS r
		WHERE r.queue = q AND r.ready_at <= t AND NOT r.paused AND r.key_hash <> ALL (tried)
			AND (NOT fair OR r.tenant = turn OR (turn IS NULL AND r.tenant IS NULL))
		ORDER BY r.ready_at, r.key_hash
		LIMIT 1
		FOR UPDATE SKIP LOCKED;
		EXIT WHEN NOT FOUND;
		IF k.lanes = 0 AND (k.batch > 0 OR k.leased_until IS NOT NULL) THEN
			-- The batch of a key of one lease, kept or lapsed, is its first lane.
			INSERT INTO lanes (queue, key_hash, fence, lo, n, attempt, leased_until, leased_at, ready_at, retrying, holder, error)
			VALUES (q, k.key_hash, k.fence, k.head, k.batch, k.attempt, k.leased_until, k.leased_at, k.ready_at, k.retrying, k.holder, k.error);
			UPDATE keys SET head = k.head + k.batch, batch = 0, leased_until = NULL, lanes = 1, lent = k.batch
			WHERE queue = q AND key_hash = k.key_hash;
		END IF;
		UPDATE keys SET per_key = greatest(claim_lanes.per_key, 1) WHERE queue = q AND key_hash = k.key_hash
		RETURNING * INTO k;
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
				UPDATE keys SET head = k.head + size WHERE queue = q AND key_hash = k.key_hash;
			END IF;
		END IF;
		IF f IS NULL THEN
			tried := tried || k.key_hash;
		ELSE
			got := got + 1;
			UPDATE keys SET fence = f, leased_at = t, holder = who, slot_at = t WHERE queue = q AND key_hash = k.key_hash;
			ks := ks || k.key;
			hs := hs || k.key_hash;
			atts := atts || att;
			fs := fs || f;
			los := los || lo;
			sizes := sizes || size;
		END IF;
		PERFORM settle_lanes(q, k.key_hash, t);
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

-- finish_lane ends the lane of fence of a key, if it is out: kind 1 Ack
-- and 2 Drop remove its values (Drop keeps them as a dead letter with
-- err), 3 Retry and 4 Defer keep it back, ready after delay (NULL:
-- never), 5 Hold keeps it and holds the key. It returns a row, with
-- whether the key has values left, if the lane was out; none otherwise.
-- slot is the session's slot of removals in counts.
CREATE OR REPLACE FUNCTION finish_lane(q text, kk bytea, f bigint, kind integer, delay interval, err bytea, slot integer)
RETURNS TABLE (more boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	h bytea := sha256(kk);
	k record;
	l record;
BEGIN
	SELECT * INTO k FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND r.key = kk FOR UPDATE;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT * INTO l FROM lanes AS x WHERE x.queue = q AND x.key_hash = h AND x.fence = f AND x.leased_until > t;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	IF kind IN (1, 2) THEN
		DELETE FROM lanes AS x WHERE x.queue = q AND x.key_hash = h AND x.fence = f;
		IF kind = 2 THEN
			INSERT INTO dead_letters (queue, key, vals, error, attempt, dropped_at)
			SELECT q, kk, array_agg(m.value ORDER BY m.seq), err, l.attempt, t
			FROM messages AS m WHERE m.queue = q AND m.key_hash = h AND m.seq >= l.lo AND m.seq < l.lo + l.n;
		END IF;
		DELETE FROM messages AS m WHERE m.queue = q AND m.key_hash = h AND m.seq >= l.lo AND m.seq < l.lo + l.n;
		INSERT INTO counts AS c (queue, slot, n) VALUES (q, slot, -l.n)
		ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
	ELSIF kind IN (3, 4) THEN
		UPDATE lanes AS x SET leased_until = NULL, ready_at = coalesce(t + delay, 'infinity'),
			attempt = x.attempt + CASE WHEN kind = 3 THEN 1 ELSE 0 END,
			retrying = kind = 3, error = CASE WHEN kind = 3 THEN err ELSE x.error END
		WHERE x.queue = q AND x.key_hash = h AND x.fence = f;
	ELSE
		UPDATE lanes AS x SET leased_until = NULL, ready_at = NULL, retrying = false, error = err
		WHERE x.queue = q AND x.key_hash = h AND x.fence = f;
		UPDATE keys SET held = true, held_at = t, error = err WHERE queue = q AND key_hash = h;
	END IF;
	UPDATE keys SET slot_at = t WHERE queue = q AND key_hash = h;
	PERFORM settle_lanes(q, h, t);
	RETURN QUERY SELECT EXISTS (SELECT FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND (r.tail > r.head OR r.lent > 0));
END $$;

-- extend_lane renews the lane of fence of a key, if it is out. It returns
-- whether it was.
CREATE OR REPLACE FUNCTION extend_lane(q text, kk bytea, f bigint, ttl interval) RETURNS boolean
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	h bytea := sha256(kk);
BEGIN
	PERFORM FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND r.key = kk FOR UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE lanes AS x SET leased_until = coalesce(t + ttl, 'infinity')
	WHERE x.queue = q AND x.key_hash = h AND x.fence = f AND x.leased_until > t;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	PERFORM settle_lanes(q, h, t);
	RETURN true;
END $$;

-- release_lanes releases a held key of lanes: the lanes back start their
-- attempts over and are ready at once, those behind the key's last lane
-- out, up to head, give their values back to head; it returns whether the
-- key was held.
CREATE OR REPLACE FUNCTION release_lanes(q text, kk bytea) RETURNS boolean
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	h bytea := sha256(kk);
	k record;
	l record;
	last_out bigint;
BEGIN
	SELECT * INTO k FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND r.key = kk AND r.held AND r.lanes > 0 FOR UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE lanes AS x SET attempt = 1, leased_until = NULL, ready_at = t, retrying = false, error = NULL
	WHERE x.queue = q AND x.key_hash = h AND (x.leased_until IS NULL OR x.leased_until <= t);
	SELECT max(x.lo) INTO last_out FROM lanes AS x WHERE x.queue = q AND x.key_hash = h AND x.leased_until > t;
	LOOP
		SELECT * INTO l FROM lanes AS x
		WHERE x.queue = q AND x.key_hash = h AND x.lo + x.n = k.head AND (last_out IS NULL OR x.lo > last_out);
		EXIT WHEN NOT FOUND;
		DELETE FROM lanes AS x WHERE x.queue = q AND x.key_hash = h AND x.fence = l.fence;
		k.head := l.lo;
	END LOOP;
	UPDATE keys SET held = false, held_at = NULL, error = NULL, head = k.head, slot_at = t WHERE queue = q AND key_hash = h;
	PERFORM settle_lanes(q, h, t);
	RETURN true;
END $$;

-- fold_lanes makes a key of lanes, locked by the caller, a key of one
-- lease whose values all run from head, for the statement of DropKey
-- that follows it (dropKeySQL), which removes head to tail: its lanes go,
-- with their leases, head goes back to its first lane, and the values
-- acked in between, which that statement takes off the count once more,
-- are counted back in slot.
CREATE OR REPLACE FUNCTION fold_lanes(q text, kk bytea, slot integer) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	h bytea := sha256(kk);
	k record;
	low bigint;
	lent bigint;
BEGIN
	SELECT * INTO k FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND r.key = kk AND r.lanes > 0;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT min(l.lo), coalesce(sum(l.n), 0) INTO low, lent FROM lanes AS l WHERE l.queue = q AND l.key_hash = h;
	DELETE FROM lanes AS l WHERE l.queue = q AND l.key_hash = h;
	IF k.head - low > lent THEN
		INSERT INTO counts AS c (queue, slot, n) VALUES (q, slot, k.head - low - lent)
		ON CONFLICT (queue, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
	END IF;
	UPDATE keys SET head = low, batch = 0, lanes = 0, lent = 0, out_until = NULL, leased_until = NULL
	WHERE queue = q AND key_hash = h;
END $$;

-- retry_lanes makes the first lane back of a key of lanes, if it waits
-- for a Retry's or a Defer's delay and the key is not held, ready now, as
-- RetryNow does a key of one lease (retryNowSQL). It returns whether it
-- did.
CREATE OR REPLACE FUNCTION retry_lanes(q text, kk bytea) RETURNS boolean
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	t timestamptz := statement_timestamp();
	h bytea := sha256(kk);
	b record;
BEGIN
	PERFORM FROM keys AS r WHERE r.queue = q AND r.key_hash = h AND r.key = kk AND r.lanes > 0 AND NOT r.held FOR UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	SELECT * INTO b FROM lanes AS l
	WHERE l.queue = q AND l.key_hash = h AND (l.leased_until IS NULL OR l.leased_until <= t)
	ORDER BY l.lo LIMIT 1;
	IF NOT FOUND OR b.leased_until IS NOT NULL OR NOT (b.ready_at > t) THEN
		RETURN false;
	END IF;
	UPDATE lanes AS l SET ready_at = t WHERE l.queue = q AND l.key_hash = h AND l.fence = b.fence;
	PERFORM settle_lanes(q, h, t);
	RETURN true;
END $$;
