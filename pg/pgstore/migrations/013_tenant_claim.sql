-- 013: a tenant claim takes the lock of its queue's turns in the claim's
-- own statement, and charges the tenants in a snapshot taken after it.
-- Run inside the migration's transaction with search_path set to the
-- store's schema; each step does nothing, or the same again, when run a
-- second time; its functions keep that search_path.

-- tenant_turns(q, n, turns_lock) is tenant_turns(q, n) (migration 011)
-- under the lock of the turns of queue q, named turns_lock (the store's
-- schema, a dot, the queue), taken first and kept until the transaction
-- ends. The claims of a queue with tenants so take their turns one after
-- another, and each query of the walk, taking its snapshot after the
-- lock, sees every turn that the claims before it took: the claim's own
-- statement, whose snapshot was taken before the lock, does not. A
-- claim waits for no row while it holds the lock (every row it locks,
-- it locks SKIP LOCKED), so a transaction that holds rows when it waits
-- for the lock waits for no transaction that waits for them.
CREATE OR REPLACE FUNCTION tenant_turns(q text, n integer, turns_lock text)
RETURNS TABLE (tenant text, vtime double precision, weight integer, ready integer, loc tid)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(hashtext('pacer.pgstore.turns'), hashtext(turns_lock));
	RETURN QUERY SELECT * FROM tenant_turns(q, n);
END $$;

-- charge_tenants advances the virtual time of each tenant ts[i] of queue
-- q, whose row is at locs[i] and locked by the caller (as tenant_turns
-- returned it), by turns[i] over its weight. VOLATILE: its UPDATE reads
-- a snapshot of its own, taken after the lock of the turns, that shows
-- the row at locs[i], which a claim that committed after the calling
-- statement's snapshot may have written. It reads the rows by their
-- places, O(len(ts)), whatever the number of tenants and of their rows'
-- versions.
CREATE OR REPLACE FUNCTION charge_tenants(q text, ts text[], locs tid[], turns double precision[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
DECLARE
	n integer;
BEGIN
	UPDATE tenants AS t
	SET vtime = t.vtime + c.turns / t.weight, last = t.vtime + c.turns / t.weight
	FROM unnest(ts, locs, turns) AS c(tenant, loc, turns)
	WHERE t.ctid = ANY (locs) AND t.ctid = c.loc AND t.queue = q AND t.tenant = c.tenant;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END $$;
