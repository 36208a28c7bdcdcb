-- 011: the tenants a claim takes its turns from, read in the order of the
-- turns whatever the planner knows of the tables. Run inside the
-- migration's transaction with search_path set to the store's schema;
-- each step does nothing, or the same again, when run a second time; its
-- functions keep that search_path.

-- tenant_turns returns the first n tenants of queue q in the turns
-- (smallest virtual time first, ties to the smaller name) that have a
-- key ready and not paused, each with its virtual time, its weight, its
-- ready keys counted up to n and its row's place (ctid, which the row
-- keeps while locked: the claim updates the row by it), and locks their
-- rows FOR NO KEY UPDATE, skipping a row another transaction holds. It walks
-- tenants_turns from the start and probes each tenant's ready keys in
-- keys_tenant_ready, so it reads the n tenants and those it passes, each
-- by at most n keys: O(n (log T + n)) for T tenants, plus the passed
-- ones, whatever the number of keys. As a statement, the same walk is
-- planned from the tables' sizes: a generic plan made on a new schema's
-- few rows reads every tenant of the queue and, for each, every key of
-- the queue, and keeps doing so as the queue grows. Here each step reads
-- one row in the order of tenants_turns, whose plan is the index's, and
-- ORDER BY in the probe makes keys_tenant_ready its index.
-- VOLATILE, as a function that locks rows must be: each of its queries
-- reads a snapshot taken when it starts, so it sees every turn that a
-- claim committed before this one took the queue's turns lock.
CREATE OR REPLACE FUNCTION tenant_turns(q text, n integer)
RETURNS TABLE (tenant text, vtime double precision, weight integer, ready integer, loc tid)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
DECLARE
	t     record;
	c     integer;
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
		-- A step at a time, LIMIT 1 after the last: a plan for one row
		-- is the index's; a loop over the whole query is planned for
		-- all rows, and may read and sort every tenant of the queue.
		SELECT tn.tenant, tn.vtime INTO t FROM tenants AS tn
		WHERE tn.queue = q AND tn.vtime IS NOT NULL AND ROW(tn.vtime, tn.tenant) > ROW(past_vtime, past_tenant)
		ORDER BY tn.vtime, tn.tenant
		LIMIT 1;
		EXIT WHEN NOT FOUND;
		past_vtime := t.vtime;
		past_tenant := t.tenant;
		SELECT count(*) INTO c FROM (
			SELECT FROM keys AS k
			WHERE k.queue = q AND k.tenant = t.tenant AND k.ready_at <= statement_timestamp()
				AND NOT k.paused AND k.lanes = 0
			ORDER BY k.ready_at
			LIMIT n
		) AS x;
		CONTINUE WHEN c = 0;
		-- The row as locked, its latest version: an Add may have set its
		-- weight, or put it back in the turns, since the walk read it.
		SELECT tn.vtime, tn.weight, tn.ctid INTO vtime, weight, loc FROM tenants AS tn
		WHERE tn.queue = q AND tn.tenant = t.tenant
		FOR NO KEY UPDATE SKIP LOCKED;
		CONTINUE WHEN NOT FOUND OR vtime IS NULL;
		tenant := t.tenant;
		ready := c;
		RETURN NEXT;
		taken := taken + 1;
		EXIT WHEN taken >= n;
	END LOOP;
END $$;
