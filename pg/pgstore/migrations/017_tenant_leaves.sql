-- 017: a tenant that a claim's walk of the turns found with no key that
-- can come ready leaves the turns by a call of its own. Run inside the
-- migration's transaction with search_path set to the store's schema; it
-- only creates a function, the same again when run a second time, and
-- changes none of the functions before, which the instances of the
-- versions before call as they did: the rows it writes are those the
-- claims of the versions before write for such a tenant (vtime NULL, its
-- own virtual time kept in last).
--
-- The claims before took those tenants out of the turns in two parts of
-- the claim statement, a scan that locked them and an UPDATE, which the
-- executor set up on every claim, as it sets up every node of a plan,
-- though most claims take no tenant out of the turns. The claim now
-- calls tenant_leaves for each such tenant, most often for none.

-- tenant_leaves takes tenant t of queue q out of the turns, unless it has
-- a key that can come ready, and reports whether it did. It locks the
-- tenant's row FOR UPDATE, skipping it if an Add or a Release holds it
-- FOR KEY SHARE (they put the tenant in the turns; the caller holds it
-- FOR NO KEY UPDATE already, which lets them pass), and asks
-- tenant_has_keys (migration 010) in a snapshot taken after that lock,
-- as the claims before did: the calling statement's snapshot misses the
-- key of an Add that committed after it began, and the tenant would
-- wait, out of the turns, for its next Add. VOLATILE, so each of its
-- statements reads a snapshot taken when it starts. Each reads the row
-- by the primary key: its plan is made once per session (plan_cache_mode)
-- and never scans the table (enable_seqscan), whatever the table held
-- when it was made.
CREATE OR REPLACE FUNCTION tenant_leaves(q text, t text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off
AS $$
BEGIN
	PERFORM FROM tenants AS tn WHERE tn.queue = q AND tn.tenant = t AND tn.vtime IS NOT NULL
	FOR UPDATE SKIP LOCKED;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE tenants AS tn SET vtime = NULL, last = tn.vtime
	WHERE tn.queue = q AND tn.tenant = t AND NOT tenant_has_keys(q, t);
	RETURN FOUND;
END $$;
