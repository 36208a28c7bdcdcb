-- 010: a claim of several keys in a queue with tenants takes all of its
-- turns at once (take_turns), where pick_tenant (008) takes one.

-- take_turns gives out the next n turns of queue q, as n calls of
-- pick_tenant would, one key each, but reads each tenant once and writes
-- no virtual time: the claim statement that calls it advances each
-- tenant's virtual time once, by the keys it leased of the tenant over
-- its weight. It returns a row per tenant with turns: how many of the n
-- turns are its, at most its keys ready now.
--
-- It walks the turns in order (smallest virtual time first, ties to the
-- smaller name), locking each tenant's row, skipping those another claim
-- holds, one row at a time (a cursor, which fetches one row per FETCH, so
-- that it locks no row it does not reach). A tenant it passes that has no
-- key that can come ready leaves the turns, as in pick_tenant. It stops at
-- the n-th tenant with a key ready: the tenants after it start no earlier,
-- so none of the n earliest turns is theirs. Of those tenants, the turns
-- are the n earliest start times, a tenant's j-th (from 0) at its virtual
-- time plus j/weight, ties to the smaller name. O(n) tenants read, each by
-- an index probe of at most n keys, plus the tenants passed that left the
-- turns; the number of tenants and keys adds nothing.
CREATE OR REPLACE FUNCTION take_turns(q text, n integer)
RETURNS TABLE (tenant text, turns integer)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
	c refcursor;
	t record;
	ready integer;
	names text[] := '{}';
	starts double precision[] := '{}';
	weights integer[] := '{}';
	readies integer[] := '{}';
BEGIN
	IF n IS NULL OR n < 1 THEN
		RETURN;
	END IF;
	OPEN c FOR SELECT tn.tenant, tn.vtime, tn.weight FROM tenants AS tn
		WHERE tn.queue = q AND tn.vtime IS NOT NULL
		ORDER BY tn.vtime, tn.tenant
		FOR UPDATE SKIP LOCKED;
	LOOP
		FETCH c INTO t;
		EXIT WHEN NOT FOUND;
		SELECT count(*) INTO ready FROM (SELECT FROM keys AS k WHERE k.queue = q AND k.tenant = t.tenant
			AND k.ready_at <= statement_timestamp() AND NOT k.paused AND k.lanes = 0 LIMIT n) AS r;
		IF ready > 0 THEN
			names := names || t.tenant;
			starts := starts || t.vtime;
			weights := weights || t.weight;
			readies := readies || ready;
			EXIT WHEN cardinality(names) >= n;
		ELSIF NOT EXISTS (SELECT FROM keys AS k WHERE k.queue = q AND k.tenant = t.tenant
				AND k.ready_at IS NOT NULL) THEN
			UPDATE tenants AS tn SET vtime = NULL, last = t.vtime WHERE tn.queue = q AND tn.tenant = t.tenant;
		END IF;
	END LOOP;
	CLOSE c;
	RETURN QUERY SELECT x.name, count(*)::integer FROM (
		SELECT s.name FROM unnest(names, starts, weights, readies) AS s(name, v, w, r)
			CROSS JOIN LATERAL generate_series(0, s.r - 1) AS j
		ORDER BY s.v + j::double precision / s.w, s.name
		LIMIT n
	) AS x GROUP BY x.name;
END $$;
