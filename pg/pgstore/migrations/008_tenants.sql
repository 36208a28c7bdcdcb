-- 008: tenants that take turns (store.FairTenants).

-- tenant is the key's tenant in a queue with tenants ('' for a key added
-- without one), from the Add that made its row; NULL in a queue without
-- tenants, whose keys keys_tenant_ready leaves out, so that it costs them
-- nothing.
ALTER TABLE keys ADD COLUMN IF NOT EXISTS tenant text;

-- keys_tenant_ready is the ready order of each tenant's keys.
CREATE INDEX IF NOT EXISTS keys_tenant_ready ON keys (queue, tenant, ready_at)
	WHERE tenant IS NOT NULL AND ready_at IS NOT NULL;

-- tenants holds a row per tenant a queue ever had: its weight, its own
-- virtual time (last), and vtime, its place in the turns, NULL while it
-- has no key that can come ready (none with values but held ones).
CREATE TABLE IF NOT EXISTS tenants (
	queue  text             NOT NULL,
	tenant text             NOT NULL,
	vtime  double precision,
	last   double precision NOT NULL DEFAULT 0,
	weight integer          NOT NULL DEFAULT 1,
	PRIMARY KEY (queue, tenant)
);

-- tenants_turns is the order of the turns: smallest virtual time first,
-- ties to the smaller name.
CREATE INDEX IF NOT EXISTS tenants_turns ON tenants (queue, vtime, tenant) WHERE vtime IS NOT NULL;

-- pick_tenant takes the turn of queue q: the tenant first in the turns
-- that has a key ready and not paused, whose row it locks (skipping the
-- rows another claim holds) and whose virtual time it advances by
-- 1/weight. A tenant it passes that has no key that can come ready leaves
-- the turns (vtime NULL, its own kept in last); one with keys that are
-- leased, delayed or debouncing stays. It returns NULL when no tenant has
-- a ready key.
CREATE OR REPLACE FUNCTION pick_tenant(q text) RETURNS text
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	t record;
BEGIN
	FOR t IN SELECT tn.tenant, tn.vtime, tn.weight FROM tenants tn
		WHERE tn.queue = q AND tn.vtime IS NOT NULL
		ORDER BY tn.vtime, tn.tenant
		FOR UPDATE SKIP LOCKED
	LOOP
		IF EXISTS (SELECT FROM keys k WHERE k.queue = q AND k.tenant = t.tenant
				AND k.ready_at <= statement_timestamp() AND NOT k.paused) THEN
			UPDATE tenants SET vtime = t.vtime + 1.0 / t.weight, last = t.vtime + 1.0 / t.weight
			WHERE queue = q AND tenant = t.tenant;
			RETURN t.tenant;
		ELSIF NOT EXISTS (SELECT FROM keys k WHERE k.queue = q AND k.tenant = t.tenant
				AND k.ready_at IS NOT NULL) THEN
			UPDATE tenants SET vtime = NULL, last = t.vtime WHERE queue = q AND tenant = t.tenant;
		END IF;
	END LOOP;
	RETURN NULL;
END $$;
