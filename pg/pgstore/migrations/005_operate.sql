-- 005: what an operator steers (store.Operator): paused queues and paused
-- keys. Run inside the migration's transaction with search_path set to the
-- store's schema; each step does nothing, or the same again, when run a
-- second time.

-- paused_queues holds a row per paused queue. A claim reads it by its
-- primary key, once per statement: a queue in it leases nothing.
CREATE TABLE IF NOT EXISTS paused_queues (
	queue     text        PRIMARY KEY,
	paused_at timestamptz NOT NULL
);

-- paused: the key is paused. A paused key keeps its row while it holds no
-- values (head = tail, ready_at 'infinity'), so that the pause outlives its
-- values; the row goes when it is resumed. A new column with a constant
-- default costs no rewrite.
ALTER TABLE keys ADD COLUMN IF NOT EXISTS paused boolean NOT NULL DEFAULT false;

-- The ready order leaves the paused keys out, so that a claim never reads
-- them, however many come due while paused: it is keys_ready of 001 with
-- a predicate that every statement reading it states. Only a pause or a
-- resume changes paused, so the updates that the store makes in place of
-- the row's page (an Add to a key that is ready already) stay so.
DROP INDEX IF EXISTS keys_ready;
CREATE INDEX keys_ready ON keys (queue, ready_at) WHERE ready_at IS NOT NULL AND NOT paused;
