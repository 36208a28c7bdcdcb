-- 006: delayed values (store.AddParams.Delay). Run inside the migration's
-- transaction with search_path set to the store's schema; each step does
-- nothing, or the same again, when run a second time. New columns without
-- a default cost no rewrite, and NULL, their value for every row a
-- version before this one wrote, means no delay.

-- due_at is when a value added with a Delay is due; NULL for the others,
-- which are due when added.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS due_at timestamptz;

-- gate is the latest due_at of a key's values, NULL if none was delayed:
-- once it passed, no value of the key waits for its time, and the claims
-- and finishes of the key do not look for one.
ALTER TABLE keys ADD COLUMN IF NOT EXISTS gate timestamptz;

-- messages_delayed finds a key's first value that waits for its time,
-- from its head, among its delayed values only: the values without a
-- delay take no entry.
CREATE INDEX IF NOT EXISTS messages_delayed ON messages (queue, key_hash, seq) WHERE due_at IS NOT NULL;
