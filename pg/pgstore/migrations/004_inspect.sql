-- 004: what an operator sees (store.Inspector). The key rows keep, beside
-- what the store needs, what a key is doing and since when, and a queue's
-- keys can be paged in one order, that of the first 64 bytes of the key,
-- then its hash. Run inside the migration's transaction with search_path
-- set to the store's schema; each step does nothing, or the same again,
-- when run a second time.
--
--   - leased_at, holder: when the current or last lease began, and who
--     claimed it (store.ClaimParams.Holder);
--   - held_at: when the key was held;
--   - error: the store.Outcome.Err of the head batch's last Retry or Hold,
--     kept until the batch is acked, dropped or released;
--   - burst_capped: the open burst's deadline (burst_due) is its max-wait
--     deadline rather than the end of its quiet period.
--
-- A new column with no default, or a constant one, costs no rewrite. Keys
-- leased or held before this migration have no leased_at or held_at.
ALTER TABLE keys
	ADD COLUMN IF NOT EXISTS leased_at    timestamptz,
	ADD COLUMN IF NOT EXISTS holder       bytea,
	ADD COLUMN IF NOT EXISTS held_at      timestamptz,
	ADD COLUMN IF NOT EXISTS error        bytea,
	ADD COLUMN IF NOT EXISTS burst_capped boolean NOT NULL DEFAULT false;

-- keys_by_name is the order in which an operator pages a queue's keys: by
-- the key's first 64 bytes, so that a prefix of up to 64 bytes is a range
-- of it, then by the key's hash, which tells apart the keys that share
-- them. A bounded prefix keeps every entry far below a btree entry's limit
-- whatever the key's length (see 003).
--
-- Its predicate holds for every row, and only the statements that page
-- say it: the planner may use an index for a statement only if the
-- statement implies the index's predicate, and the store's other
-- statements, whose plans are made once and kept, must not find a key
-- through this index, by its queue alone, where the primary key finds it
-- by its hash (see Plans in the package doc). It reads the key alone, as
-- the index does, which no statement changes, so that an update that
-- changes no column of keys_ready or the primary key stays a HOT update,
-- which makes no index entry (an Add to a key that is ready already).
CREATE INDEX IF NOT EXISTS keys_by_name ON keys (queue, substring(key FROM 1 FOR 64), key_hash)
	WHERE octet_length(key) >= 0;

-- The same order for the held keys and the keys waiting for a Retry,
-- which few keys are but an operator looks for: a page of them reads
-- these entries only. Being partial, they take no entry from a claim, an
-- Ack or a Defer, whose rows are neither held nor retrying; and no update
-- changes held or retrying without moving the key in keys_ready (an update
-- that is not HOT already).
CREATE INDEX IF NOT EXISTS keys_held ON keys (queue, substring(key FROM 1 FOR 64), key_hash)
	WHERE held AND octet_length(key) >= 0;
CREATE INDEX IF NOT EXISTS keys_retrying ON keys (queue, substring(key FROM 1 FOR 64), key_hash)
	WHERE retrying AND octet_length(key) >= 0;
