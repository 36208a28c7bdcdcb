-- 003: keys of any length. A btree entry holds at most about 2.7 kB, so
-- the key tables are no longer indexed by the key itself but by its
-- SHA-256, 32 bytes whatever the key's length: keys keeps the key and its
-- hash, one row per (queue, key_hash), and messages name their key by its
-- hash alone. Statements compute key_hash as sha256(key), and those that
-- look a key up by the caller's key compare the key too. Run inside the
-- migration's transaction with search_path set to the store's schema; each
-- step does nothing, or the same again, when run a second time.

ALTER TABLE keys ADD COLUMN IF NOT EXISTS key_hash bytea;
UPDATE keys SET key_hash = sha256(key) WHERE key_hash IS NULL;
ALTER TABLE keys
	DROP CONSTRAINT IF EXISTS keys_pkey,
	ADD CONSTRAINT keys_pkey PRIMARY KEY (queue, key_hash);

-- A message's key becomes its key's hash, in one rewrite of the table,
-- which rebuilds the primary key on (queue, key_hash, seq).
DO $$
BEGIN
	IF EXISTS (SELECT FROM pg_attribute
		WHERE attrelid = to_regclass('messages') AND attname = 'key' AND NOT attisdropped) THEN
		ALTER TABLE messages ALTER COLUMN key TYPE bytea USING sha256(key);
		ALTER TABLE messages RENAME COLUMN key TO key_hash;
	END IF;
END $$;
