-- 010: a tenant leaves the turns only when a snapshot taken after its row
-- was locked shows it no key that can come ready. Run inside the
-- migration's transaction with search_path set to the store's schema;
-- each step does nothing, or the same again, when run a second time; its
-- functions keep that search_path.

-- tenant_has_keys reports whether tenant t of queue q has a key that can
-- come ready (one with values that is not held). Being VOLATILE, its
-- query reads a snapshot of its own, taken when it is called, not the
-- calling statement's: a claim that locked t's row FOR UPDATE calls it
-- before it takes t out of the turns, and so sees the keys of every Add
-- that committed before that lock, while an Add that comes later waits
-- for the claim's commit (it locks the row FOR KEY SHARE) and then
-- finds t out of the turns, and puts it back.
CREATE OR REPLACE FUNCTION tenant_has_keys(q text, t text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
BEGIN
	RETURN EXISTS (SELECT FROM keys AS k WHERE k.queue = q AND k.tenant = t AND k.ready_at IS NOT NULL);
END $$;
