-- rate_tries is rate_try, taking, for several keys of one Keyed at once:
-- the TakeKey calls of one process that came at the same time
-- (keyflight.go), in one transaction. It returns one row per element of
-- b_keys: its position (from 1), and what rate_try returned for it.
--
-- It takes the keys in their order, and a key that comes twice in the
-- order its takes came, so that the second sees the first: two calls, in
-- any processes, lock the rows they share in the same order as each
-- other and as allowKeys's statement, and never wait for each other both
-- ways. Each key's take is rate_try's, with the clock read once its row
-- is locked, so the order of different keys changes nothing.
CREATE OR REPLACE FUNCTION rate_tries(
    b_name bytea, b_keyed boolean, b_keys bytea[], step interval, span interval)
RETURNS TABLE (pos bigint, seen timestamptz, at timestamptz)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    k record;
BEGIN
    FOR k IN SELECT u.key, u.pos FROM unnest(b_keys) WITH ORDINALITY AS u(key, pos) ORDER BY u.key, u.pos LOOP
        pos := k.pos;
        SELECT t.seen, t.at INTO seen, at FROM rate_try(b_name, b_keyed, k.key, step, span, true) AS t;
        RETURN NEXT;
    END LOOP;
END
$$;
