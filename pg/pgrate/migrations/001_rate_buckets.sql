-- rate_buckets holds one row per shared bucket in use: a Bucket's (keyed
-- false, key empty) or one key's of a Keyed (keyed true). A bucket without
-- a row is full and not paused, so a row need not outlive that state:
-- sweeps delete the rows of idle keys. The table is UNLOGGED: its writes
-- skip the write-ahead log, and a crash of the server empties it (every
-- bucket full again, every pause ended); see the package doc.
--
-- tat, the theoretical arrival time of GCRA: the bucket is full again at
-- tat. paused_until: no event before it (a time past if none). seen: the
-- server's clock (clock_timestamp()) that the last take read, which its
-- reply returns. fillfactor leaves room on each page for the new version
-- of a row that every take writes, so that the update stays on its page
-- (HOT) and the primary key is not touched.
CREATE UNLOGGED TABLE IF NOT EXISTS rate_buckets (
    name         bytea       NOT NULL,
    keyed        boolean     NOT NULL,
    key          bytea       NOT NULL,
    tat          timestamptz NOT NULL,
    paused_until timestamptz NOT NULL,
    seen         timestamptz NOT NULL,
    PRIMARY KEY (name, keyed, key)
) WITH (fillfactor = 50);
