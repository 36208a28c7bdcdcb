-- 013: tenant_turns (011) in one statement per tenant it takes, where 011
-- ran three (the next turn, the count of its ready keys, the lock of its
-- row). Run inside the migration's transaction with search_path set to
-- the store's schema; it only replaces a function, with the same
-- signature and the same rows, the same again when run a second time.

-- tenant_turns returns what it returned in 011: the first n tenants of
-- queue q in the turns that have a key ready and not paused, each with
-- its virtual time, its weight, its ready keys counted up to n and its
-- row's place, their rows locked FOR NO KEY UPDATE, skipping a row
-- another transaction holds. Each step is one query: the next tenant in
-- tenants_turns after the last one taken that has a ready key (a probe of
-- keys_tenant_ready for one), locked SKIP LOCKED, LIMIT 1. The rows are
-- locked before the limit counts them (LockRows under Limit): a row
-- another transaction holds is skipped, and one that an Add changed is
-- read again in its latest version, its conditions checked once more, as
-- the separate lock of 011 did. The probes are scalar subqueries, which
-- PostgreSQL never turns into joins: the plan of the step stays the
-- index's, a row at a time, whatever the planner knows of the tables,
-- and the count runs only for a tenant found with a ready key.
-- O(n (log T + n)) for T tenants, plus the passed ones, as in 011.
-- VOLATILE: each step reads a snapshot taken when it starts.
CREATE OR REPLACE FUNCTION tenant_turns(q text, n integer)
RETURNS TABLE (tenant text, vtime double precision, weight integer, ready integer, loc tid)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
DECLARE
	t     record;
	taken integer := 0;
	-- Where the walk is: after the turn of (past_vtime, past_tenant). No tenant's
	-- virtual time is -infinity.
	past_vtime  double precision := '-infinity';
	past_tenant text := '';
BEGIN
	IF n < 1 THEN
		RETURN;
	END IF;
	LOOP
		SELECT tn.tenant, tn.vtime, tn.weight, tn.ctid AS loc,
			(SELECT count(*) FROM (
				SELECT FROM keys AS k
				WHERE k.queue = q AND k.tenant = tn.tenant AND k.ready_at <= statement_timestamp()
					AND NOT k.paused AND k.lanes = 0
				ORDER BY k.ready_at
				LIMIT n
			) AS x)::integer AS ready
		INTO t FROM tenants AS tn
		WHERE tn.queue = q AND tn.vtime IS NOT NULL AND ROW(tn.vtime, tn.tenant) > ROW(past_vtime, past_tenant)
			-- ORDER BY: so that the probe is of keys_tenant_ready, the
			-- tenant's keys only, in any plan.
			AND (SELECT k.ready_at FROM keys AS k
				WHERE k.queue = q AND k.tenant = tn.tenant AND k.ready_at <= statement_timestamp()
					AND NOT k.paused AND k.lanes = 0
				ORDER BY k.ready_at
				LIMIT 1) IS NOT NULL
		ORDER BY tn.vtime, tn.tenant
		LIMIT 1
		FOR NO KEY UPDATE SKIP LOCKED;
		EXIT WHEN NOT FOUND;
		past_vtime := t.vtime;
		past_tenant := t.tenant;
		-- A key leased between the probe and the count leaves none.
		CONTINUE WHEN t.ready = 0;
		tenant := t.tenant;
		vtime := t.vtime;
		weight := t.weight;
		ready := t.ready;
		loc := t.loc;
		RETURN NEXT;
		taken := taken + 1;
		EXIT WHEN taken >= n;
	END LOOP;
END $$;
