-- 002: counts keeps how many values each queue stores, so that an Add with
-- store.AddParams.MaxValues checks its bound in O(1). A queue's count is
-- the sum of its rows' n, over slots that spread the writes (see
-- queries.go): 0-31 count the values added, spread so that Adds do not
-- wait for one another's commits; 32 counts the values of bounded Adds, which lock slots 0-32 to
-- check their bound; 33-64 count, negative, the values acked or dropped,
-- each session in its own slot again.
CREATE TABLE IF NOT EXISTS counts (
	queue text    NOT NULL,
	slot  integer NOT NULL,
	n     bigint  NOT NULL,
	PRIMARY KEY (queue, slot)
);

-- The values stored before the counts were kept.
INSERT INTO counts (queue, slot, n)
SELECT queue, 0, sum(tail - head) FROM keys GROUP BY queue
ON CONFLICT (queue, slot) DO NOTHING;
