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
-- returned it), by turns[i] over its weight. VOLATILE: each UPDATE reads
-- a snapshot of its own, taken after the lock of the turns, that shows
-- the row at locs[i], which a claim that committed after the calling
-- statement's snapshot may have written. A row at a time, by its place:
-- a TID scan, O(1) a tenant whatever the number of tenants and of their
-- rows' versions. In one statement for all, a plan made while the queue
-- has few tenants reads all of them (a scan of the table, or of the
-- queue's primary key entries), and keeps doing so as they grow;
-- enable_seqscan off keeps a plan made on a table of a page from being
-- its scan.
CREATE OR REPLACE FUNCTION charge_tenants(q text, ts text[], locs tid[], turns double precision[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT SET enable_seqscan = off AS $$
DECLARE
	n integer := 0;
BEGIN
	FOR i IN 1 .. coalesce(cardinality(ts), 0) LOOP
		UPDATE tenants AS t
		SET vtime = t.vtime + turns[i] / t.weight, last = t.vtime + turns[i] / t.weight
		WHERE t.ctid = locs[i] AND t.queue = q AND t.tenant = ts[i];
		IF FOUND THEN
			n := n + 1;
		END IF;
	END LOOP;
	RETURN n;
END $$;
