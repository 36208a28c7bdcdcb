-- rate_try takes one event from a bucket if it conforms now, and
-- otherwise takes nothing and says when it would: what a caller that
-- never waits needs (ratelimit.KeyGate). With take false it only looks:
-- it neither locks nor writes, and makes no row for a bucket that has
-- none. It returns one row: the server's clock it read and the instant
-- the event conforms, never before that clock; equal to it if the event
-- may happen now (and, with take, was taken). A bucket without a row is
-- full: a take from it inserts its row.
--
-- It is a function, not one statement, because a refused take must
-- read the row it locked, which an INSERT ... ON CONFLICT DO UPDATE can
-- only return as it wrote it; here a refused take writes nothing.
CREATE OR REPLACE FUNCTION rate_try(
    b_name bytea, b_keyed boolean, b_key bytea, step interval, span interval, take boolean)
RETURNS TABLE (seen timestamptz, at timestamptz)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    t      timestamptz;
    paused timestamptz;
    now    timestamptz;
BEGIN
    LOOP
        IF take THEN
            SELECT r.tat, r.paused_until INTO t, paused
            FROM rate_buckets r
            WHERE r.name = b_name AND r.keyed = b_keyed AND r.key = b_key
            FOR UPDATE;
        ELSE
            SELECT r.tat, r.paused_until INTO t, paused
            FROM rate_buckets r
            WHERE r.name = b_name AND r.keyed = b_keyed AND r.key = b_key;
        END IF;
        IF FOUND THEN
            -- The clock is read once the row is locked, as take's is.
            now := clock_timestamp();
            seen := now;
            at := greatest(now, paused, t + step - span);
            IF take AND at = now THEN
                UPDATE rate_buckets r SET tat = greatest(t, now) + step, seen = now
                WHERE r.name = b_name AND r.keyed = b_keyed AND r.key = b_key;
            END IF;
            RETURN NEXT;
            RETURN;
        END IF;
        now := clock_timestamp();
        seen := now;
        at := now;
        IF NOT take THEN
            RETURN NEXT;
            RETURN;
        END IF;
        INSERT INTO rate_buckets (name, keyed, key, tat, paused_until, seen)
        VALUES (b_name, b_keyed, b_key, now + step, now, now)
        ON CONFLICT (name, keyed, key) DO NOTHING;
        IF FOUND THEN
            RETURN NEXT;
            RETURN;
        END IF;
        -- Another take inserted the row meanwhile: lock it and look again.
    END LOOP;
END
$$;
