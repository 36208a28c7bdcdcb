package pgstore

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The parts of the claim statement of a queue with tenants of the version
// before this one (main at 308467b), which its instances run beside this
// one's while a service upgrades: its walk of the turns (walkTurnsSQL),
// its pick (fairPickSQL) and its charge (chargeSQL), kept here to run
// them beside this version's (TestTenantClaimBesideTheOneBefore,
// TestMeasureTenantClaimStatement).

// walkTurnsBeforeSQL walks the turns of queue $1 from the start, a tenant a
// step, to the {turns}-th tenant with a key ready: a step is the next
// tenant in tenants_turns after the last one found whose ready keys, not
// paused, counted up to {turns} in keys_tenant_ready, are not none, its
// row locked FOR NO KEY UPDATE SKIP LOCKED before LIMIT 1 counts it
// (LockRows under Limit: a row another transaction holds is skipped, and
// one that an Add changed is read again in its latest version, its
// conditions checked once more), with that count and its row's place
// (ctid, which the row keeps while locked: chargeSQL updates the row by
// it). Its first row is the start, with no key ready.
//
// It is the walk of tenant_turns (migrations 011 and 013), which older
// versions call, in the claim statement: there a step was a statement of
// a PL/pgSQL function, each planned, started and ended by the executor
// on its own, which cost a claim more than the steps' reads; here a step
// is a rescan of one plan, and the count is the probe for a ready key,
// where tenant_turns probed once for one and once more to count. The
// count is a LATERAL subquery of the tenant's row, which only a nested
// loop over the tenants can run, and LIMIT 1 in the order of
// tenants_turns makes the walk the index's: a row at a time, whatever the
// planner knows of the tables, as TestTenantPlansMadeSmallStayBounded
// checks. O({turns} (log T + {turns})) for T tenants, plus the passed
// ones. The claim statement's snapshot, taken after the lock of the
// turns, is every step's: it sees every turn that a claim committed
// before this one took that lock.
const walkTurnsBeforeSQL = `, walk (tenant, vtime, weight, ready, loc, taken) AS (
	-- The start: before every turn. No tenant's virtual time is
	-- -infinity.
	SELECT '', '-infinity'::double precision, 1, 0, NULL::tid, 0
	WHERE (SELECT running FROM running)
	UNION ALL
	SELECT x.tenant, x.vtime, x.weight, x.ready, x.loc, w.taken + 1
	FROM walk AS w CROSS JOIN LATERAL (
		SELECT tn.tenant, tn.vtime, tn.weight, tn.ctid AS loc, c.ready
		FROM {schema}.tenants AS tn CROSS JOIN LATERAL (
			-- ORDER BY: so that the count is of keys_tenant_ready, the
			-- tenant's keys only, in any plan.
			SELECT count(*)::integer AS ready FROM (
				SELECT FROM {schema}.keys AS k
				WHERE k.queue = $1 AND k.tenant = tn.tenant AND k.ready_at <= statement_timestamp()
					AND NOT k.paused AND k.lanes = 0
				ORDER BY k.ready_at
				LIMIT {turns}
			) AS x
		) AS c
		WHERE tn.queue = $1 AND tn.vtime IS NOT NULL AND ROW(tn.vtime, tn.tenant) > ROW(w.vtime, w.tenant)
			AND c.ready > 0
		ORDER BY tn.vtime, tn.tenant
		LIMIT 1
		FOR NO KEY UPDATE OF tn SKIP LOCKED
	) AS x
	WHERE w.taken < {turns}
)`

// fairPickBeforeSQL is claimPickSQL in a queue with tenants: it takes the next
// {turns} turns of the tenants, as {turns} calls of pick_tenant
// (migration 008) would, and for each tenant as many of its oldest ready
// keys as it has turns, locked; chargeSQL then advances the tenants'
// virtual times, once each.
//
// cand, read by walk (walkTurnsBeforeSQL), is the first {turns} tenants in the
// turns (smallest virtual time first, ties to the smaller name) with a
// key ready, each locked FOR NO KEY UPDATE, which lets the Adds' FOR KEY
// SHARE pass (see activateSQL), skipping those another transaction holds
// (an Add that changes the row, a claim of several leases of a key);
// each with its ready keys counted up to {turns}. The tenants after them
// start no earlier, so none of the {turns} earliest turns is theirs. Of
// those, the turns are the earliest
// start times, a tenant's j-th (from 0) at its virtual time plus
// j/weight, ties to the smaller name. leaving and gone take out of the
// turns the tenants that cand passed (those before its last in the
// turns), or all if it found none, that have no key that can come ready,
// as pick_tenant does: so a tenant earns no turns while it has nothing to
// run. leaving locks them FOR UPDATE, skipping a row an Add or a Release
// holds FOR KEY SHARE, and gone asks tenant_has_keys (migration 010)
// once more in a snapshot taken after those locks: the statement's own
// snapshot misses the key of an Add that committed after it began, and
// the tenant would wait, out of the turns, for its next Add. It reads
// O({turns}) tenants, each by an index probe of at most {turns} keys,
// plus those passed: the number of tenants and keys adds nothing. With
// the queue paused it takes no turn.
const fairPickBeforeSQL = walkTurnsBeforeSQL + `, cand AS MATERIALIZED (
	SELECT w.tenant, w.vtime, w.weight, w.ready, w.loc FROM walk AS w WHERE w.ready > 0
), leaving AS MATERIALIZED (
	SELECT tn.tenant FROM {schema}.tenants AS tn
	WHERE tn.queue = $1 AND tn.vtime IS NOT NULL
		-- Before the last of cand in the turns: its row in the index
		-- bounds the scan, however many tenants tie with it.
		AND ROW(tn.vtime, tn.tenant) < ROW(
			coalesce((SELECT vtime FROM cand ORDER BY vtime DESC, tenant DESC LIMIT 1), 'infinity'),
			coalesce((SELECT tenant FROM cand ORDER BY vtime DESC, tenant DESC LIMIT 1), ''))
		-- ORDER BY: so that the probe is of keys_tenant_ready, the
		-- tenant's keys only, in any plan.
		AND (SELECT k.ready_at FROM {schema}.keys AS k WHERE k.queue = $1 AND k.tenant = tn.tenant
			AND k.ready_at IS NOT NULL ORDER BY k.ready_at LIMIT 1) IS NULL
		AND (SELECT running FROM running)
	ORDER BY tn.vtime, tn.tenant
	FOR UPDATE SKIP LOCKED
), gone AS (
	-- leaving's locks are taken, and the Adds that held these rows
	-- committed, before tenant_has_keys reads its own snapshot.
	UPDATE {schema}.tenants AS t SET vtime = NULL, last = t.vtime
	WHERE t.queue = $1 AND t.tenant = ANY (ARRAY(SELECT tenant FROM leaving))
		AND NOT {schema}.tenant_has_keys($1, t.tenant)
		-- A plan may read every tenant of the queue for the few in
		-- leaving: none, most often, and then it reads none.
		AND EXISTS (SELECT FROM leaving)
), turns AS MATERIALIZED (
	SELECT x.tenant, count(*)::integer AS turns FROM (
		SELECT c.tenant FROM cand AS c CROSS JOIN LATERAL generate_series(0, c.ready - 1) AS j
		ORDER BY c.vtime + j::double precision / c.weight, c.tenant
		LIMIT {turns}
	) AS x
	GROUP BY x.tenant
), picked AS MATERIALIZED (
	-- ready_at is here the start time of the key's turn, its tenant's
	-- j-th (from 1) at its virtual time plus (j-1)/weight: the claim
	-- returns its leases in that order, and a flight takes its keys in it
	-- (claimSharedTake).
	SELECT r.queue, r.key_hash, c.vtime + (r.j - 1)::double precision / c.weight AS ready_at, r.tenant
	FROM turns JOIN cand AS c USING (tenant) CROSS JOIN LATERAL (
		SELECT x.queue, x.key_hash, x.tenant, row_number() OVER () AS j FROM (
			SELECT queue, key_hash, tenant
			FROM {schema}.keys
			WHERE queue = $1 AND tenant = turns.tenant AND ready_at <= statement_timestamp() AND NOT paused
				AND lanes = 0
			ORDER BY ready_at
			LIMIT turns.turns
			FOR UPDATE SKIP LOCKED
		) AS x
	) AS r
	LIMIT {keys}
)`

// chargeBeforeSQL advances, once per claim statement, the virtual time of each
// tenant whose keys it leased by their number over its weight: the time
// of as many turns as it took. A turn whose key another claim held has
// no lease, and costs its tenant nothing. Each tenant's row is read by
// its place, which walk (walkTurnsBeforeSQL) read with the row locked: by the
// primary key, a plan may read every tenant of the queue, each version
// that the claims left behind them.
const chargeBeforeSQL = `), charged AS (
	UPDATE {schema}.tenants AS t
	SET vtime = t.vtime + l.n / t.weight, last = t.vtime + l.n / t.weight
	FROM (SELECT p.tenant, count(*)::double precision AS n FROM leased JOIN picked AS p USING (key_hash) GROUP BY p.tenant) AS l
		JOIN cand AS c USING (tenant)
	WHERE t.ctid = c.loc AND t.tenant = c.tenant
), upcoming AS (`

// claimOf308467b returns claim statement sql of a queue with tenants,
// made by s for keys keys, as 308467b makes it: its pick (fairPickSQL)
// that of 308467b. turns is the form's {turns}: "{keys}", or sharedTurns.
func claimOf308467b(tb testing.TB, s *Store, sql, turns string, keys int) string {
	tb.Helper()
	pick := func(p string) string {
		return strings.NewReplacer("{schema}", pgx.Identifier{s.cfg.Schema}.Sanitize(), "{turns}", turns).Replace(p)
	}
	fill := func(p string) string { return strings.ReplaceAll(p, "{keys}", strconv.Itoa(keys)) }
	sql = mustReplace(sql, fill(pick(fairPickSQL)), fill(pick(fairPickBeforeSQL)))
	sql = mustReplace(sql, leasedTenantSQL, "picked.ready_at AS was_ready")
	return mustReplace(sql, pick(chargeSQL), pick(chargeBeforeSQL))
}
