-- 004: what an operator sees (store.Inspector). The key rows keep, beside
-- what the store needs, what a key is doing and since when, and the held
-- and the retrying keys of a queue can be listed without reading the
-- others. Run inside the migration's transaction with search_path
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

-- An operator pages a queue's keys in the order of the primary key, by
-- the key's SHA-256 (see 003), which no statement that claims or finishes
-- has to keep up: an index in the order of the keys themselves would take
-- an entry from every update that moves a key in the ready order (a
-- claim, an Ack that leaves values), which PostgreSQL cannot make in
-- place of the row's page. The held keys and the keys waiting for a
-- Retry, which few keys are but an operator looks for, have indexes of
-- their own in that order, so that a page of them reads these entries
-- only. Being partial, they take no entry from a claim, an Ack or a Defer,
-- whose rows are neither held nor retrying; and no update changes held or
-- retrying without moving the key in keys_ready, so an update made in
-- place of the row's page (an Add to a key that is ready already) stays
-- so.
CREATE INDEX IF NOT EXISTS keys_held ON keys (queue, key_hash) WHERE held;
CREATE INDEX IF NOT EXISTS keys_retrying ON keys (queue, key_hash) WHERE retrying;
