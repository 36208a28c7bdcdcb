-- 016: keep_key_rate, by which a rated claim statement keeps a key's T in
-- key_rates (migration 015). Run inside the migration's transaction with
-- search_path set to the store's schema; a second run replaces the
-- function with the same. It changes no function before: the claims of
-- the instances of 015 write key_rates with an INSERT of their own, as
-- they did, and this one writes the same rows.
--
-- A rated claim calls it for each key it leases the last values of, a
-- few leases in a key's life; an INSERT in the claim statement itself
-- would cost every claim the opening of key_rates and of its index for
-- the write, whether it writes a row or not. PL/pgSQL keeps the plan of
-- its INSERT for the session.

-- keep_key_rate sets the T of key h of queue q in key_rates to t, with
-- the tolerance tol of the KeyRate that set it, and returns t.
CREATE OR REPLACE FUNCTION keep_key_rate(q text, h bytea, t timestamptz, tol interval)
RETURNS timestamptz
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO key_rates AS kr (queue, key_hash, t, tol) VALUES (q, h, t, tol)
	ON CONFLICT (queue, key_hash) DO UPDATE SET t = EXCLUDED.t, tol = EXCLUDED.tol;
	RETURN t;
END $$;
