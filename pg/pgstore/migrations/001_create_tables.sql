-- 001: the tables of a store. Run inside the migration's transaction with
-- search_path set to the store's schema, which holds nothing else.

-- keys holds a row per key that has values: its place in the ready order,
-- its lease, its open burst and its head batch. Claims lock these rows,
-- never the values' rows, so that a key has one holder at a time. A row
-- is removed when its last value is acked or dropped.
CREATE TABLE IF NOT EXISTS keys (
	queue        text        NOT NULL,
	key          bytea       NOT NULL,
	-- The key's values are the messages of seq head to tail-1, in order.
	head         bigint      NOT NULL DEFAULT 0,
	tail         bigint      NOT NULL,
	-- batch is the size of the head batch: out on the lease, or kept after
	-- a lapse, Retry, Defer or Hold for the next lease to take as it is; 0
	-- lets the next lease take what its MaxBatch allows.
	batch        integer     NOT NULL DEFAULT 0,
	-- attempt is the head batch's Attempt: the current one while leased,
	-- else the next one.
	attempt      integer     NOT NULL DEFAULT 1,
	-- The last burst values are an open burst until burst_due; burst_first
	-- is when its first value came.
	burst        integer     NOT NULL DEFAULT 0,
	burst_first  timestamptz,
	burst_due    timestamptz,
	-- ready_at is when the key is or was ready to lease, or when its lease
	-- lapses; 'infinity' for never, NULL while held. Claim takes the keys
	-- whose ready_at has passed, oldest first.
	ready_at     timestamptz,
	-- A lease is out while leased_until is set; fence is its token.
	leased_until timestamptz,
	fence        bigint      NOT NULL DEFAULT 0,
	held         boolean     NOT NULL DEFAULT false,
	-- retrying: waiting for a Retry's delay, not a Defer's.
	retrying     boolean     NOT NULL DEFAULT false,
	-- The statements keep head < tail, head + batch + burst <= tail,
	-- held = (ready_at IS NULL) and ready_at = leased_until while leased.
	-- These are not CHECK constraints: PostgreSQL checks an UPDATE's new row
	-- before it follows a concurrent update to the row's latest version,
	-- so a constraint would refuse updates that are right.
	PRIMARY KEY (queue, key)
);

-- keys_ready is the ready order: Claim reads it from the start and stops
-- at the first key not yet due, so its cost follows the keys that are
-- ready, not the values queued behind them. Held keys are not in it.
CREATE INDEX IF NOT EXISTS keys_ready ON keys (queue, ready_at) WHERE ready_at IS NOT NULL;

-- messages holds the values, a row each, in (queue, key, seq) order.
CREATE TABLE IF NOT EXISTS messages (
	queue    text        NOT NULL,
	key      bytea       NOT NULL,
	seq      bigint      NOT NULL,
	value    bytea       NOT NULL,
	added_at timestamptz NOT NULL,
	PRIMARY KEY (queue, key, seq)
);

-- fences numbers the leases of every key of every queue: a key's fences
-- keep growing after its row was removed and made again. A sequence never
-- blocks a claim, and with its default CACHE 1 it hands out numbers in the
-- order they are asked for, whichever session asks.
CREATE SEQUENCE IF NOT EXISTS fences AS bigint;

-- dead_letters keeps the dropped batches.
CREATE TABLE IF NOT EXISTS dead_letters (
	id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	queue      text        NOT NULL,
	key        bytea       NOT NULL,
	vals       bytea[]     NOT NULL,
	error      bytea       NOT NULL,
	attempt    integer     NOT NULL,
	dropped_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS dead_letters_by_id ON dead_letters (queue, id);
CREATE INDEX IF NOT EXISTS dead_letters_by_time ON dead_letters (queue, dropped_at);
