-- rate_takes takes several events from one bucket at once, in the order
-- of most, each as the take statement would, one after the other, at the
-- same instant: the calls of one process that came at the same time (see
-- flight.go). most[i] is the longest delay the i-th accepts, NULL for any.
-- It returns a row per event, in order: the server's clock it read, and
-- for an event taken its conforming instant and the tat written after it,
-- both NULL for one refused. A bucket without a row is full: its row is
-- made so, and locked, before the events are taken.
CREATE OR REPLACE FUNCTION rate_takes(
    b_name bytea, b_keyed boolean, b_key bytea, step interval, span interval, most interval[])
RETURNS TABLE (seen timestamptz, at timestamptz, tat timestamptz)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    t      timestamptz;
    paused timestamptz;
    now    timestamptz;
    m      interval;
    taken  boolean := false;
BEGIN
    -- Lock the row, made full if missing; a sweep may delete it between
    -- the two statements, so try again until the lock holds one.
    LOOP
        INSERT INTO rate_buckets (name, keyed, key, tat, paused_until, seen)
        VALUES (b_name, b_keyed, b_key, clock_timestamp(), clock_timestamp(), clock_timestamp())
        ON CONFLICT (name, keyed, key) DO NOTHING;
        SELECT r.tat, r.paused_until INTO t, paused
        FROM rate_buckets r
        WHERE r.name = b_name AND r.keyed = b_keyed AND r.key = b_key
        FOR UPDATE;
        EXIT WHEN FOUND;
    END LOOP;
    now := clock_timestamp();
    seen := now;
    FOREACH m IN ARRAY most LOOP
        at := greatest(now, paused, t + step - span);
        IF m IS NULL OR at - now <= m THEN
            t := greatest(t, at) + step;
            tat := t;
            taken := true;
        ELSE
            at := NULL;
            tat := NULL;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF taken THEN
        UPDATE rate_buckets r SET tat = t, seen = now
        WHERE r.name = b_name AND r.keyed = b_keyed AND r.key = b_key;
    END IF;
END
$$;
