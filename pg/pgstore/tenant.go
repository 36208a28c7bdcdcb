package pgstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/store"
)

var _ store.FairTenants = (*Store)(nil)

// FairTenants implements store.FairTenants: see Tenants in the package
// doc.
func (s *Store) FairTenants() {}

// activateSQL, inside an Add's statement, gives tenant {tenant} a place in
// the turns if it has none, from the larger of its own virtual time and
// the queue's clock (the smallest virtual time in the turns), and sets
// its weight to {weight} when positive. It reads the tenant's row FOR KEY
// SHARE, which a claim's update of the virtual time lets pass but a claim
// that takes the tenant out of the turns does not (see fairPickSQL): so it
// reads the row as the last claim left it, and no claim takes the tenant
// out of the turns until the Add's key is committed. When the tenant is in
// the turns with that weight already, the common case, it writes no
// tenant row.
const activateSQL = `, tenant_held AS MATERIALIZED (
	SELECT t.vtime, t.weight FROM {schema}.tenants AS t WHERE t.queue = $1 AND t.tenant = {tenant}::text
	FOR KEY SHARE
), tenant_up AS (
	INSERT INTO {schema}.tenants AS t (queue, tenant, vtime, last, weight)
	SELECT $1, {tenant}::text, c.v, c.v, greatest({weight}::integer, 1)
	FROM (SELECT coalesce((SELECT min(vtime) FROM {schema}.tenants WHERE queue = $1 AND vtime IS NOT NULL), 0) AS v) c
	WHERE NOT EXISTS (SELECT FROM tenant_held AS h
		WHERE h.vtime IS NOT NULL AND ({weight}::integer = 0 OR h.weight = {weight}::integer))
	ON CONFLICT (queue, tenant) DO UPDATE SET
		weight = CASE WHEN {weight}::integer > 0 THEN {weight}::integer ELSE t.weight END,
		vtime = coalesce(t.vtime, greatest(t.last, EXCLUDED.vtime))
)`

// releaseTenantSQL gives the tenant of a key that Release put back in the
// ready order its place in the turns, if it left them while the key was
// held. It reads the tenant's row FOR KEY SHARE, as activateSQL does, so
// that it sees the turns as the last claim left them. $1 queue, $2 key.
const releaseTenantSQL = `
WITH held AS MATERIALIZED (
	SELECT t.tenant, t.vtime FROM {schema}.tenants AS t
	WHERE t.queue = $1 AND t.tenant = (SELECT tenant FROM {schema}.keys WHERE queue = $1 AND key_hash = sha256($2))
	FOR KEY SHARE
)
UPDATE {schema}.tenants AS t
SET vtime = greatest(t.last, coalesce((SELECT min(vtime) FROM {schema}.tenants WHERE queue = $1 AND vtime IS NOT NULL), t.last))
FROM held
WHERE t.queue = $1 AND t.tenant = held.tenant AND held.vtime IS NULL`

// fairQueueSQL reports whether a queue has tenants.
const fairQueueSQL = `SELECT EXISTS (SELECT FROM {schema}.tenants WHERE queue = $1)`

// walkTurnsSQL walks the turns of queue $1 from the start, a tenant a
// step, to the {turns}-th tenant with a key ready: a step is the next
// tenant in tenants_turns after the last one, its row locked FOR NO KEY
// UPDATE SKIP LOCKED before LIMIT 1 counts it (LockRows under Limit: a
// row another transaction holds is skipped, and one that an Add changed
// is read again in its latest version, its conditions checked once
// more), with its row's place (ctid, which the row keeps while locked:
// the charge updates the row by it) and its ready keys, not paused,
// counted up to {turns} in keys_tenant_ready. taken counts the tenants
// with a key ready. Its first row is the start, with no key ready and
// no place.
//
// It is the walk of tenant_turns (migrations 011 and 013), which older
// versions call, in the claim statement: there a step was a statement of
// a PL/pgSQL function, each planned, started and ended by the executor
// on its own, which cost a claim more than the steps' reads; here a step
// is a rescan of one plan. A step reads the next row of tenants_turns
// and nothing else: LIMIT 1 in the index's order, with no condition but
// the index's, makes the walk the index's, a row at a time, whatever the
// planner knows of the tables, as TestTenantPlansMadeSmallStayBounded
// checks. The count is a LATERAL subquery of the row the step took. With
// the count a condition of the step (the tenants with none ready passed
// inside it), a plan may instead read every tenant after the last, by a
// bitmap scan, count the keys of each and sort them, when it takes the
// queue for one of few tenants (a generic plan made without statistics
// of the queue's column, as after a first fill of the table): O(T) a
// step. So each tenant the walk passes is a step of its own: most often
// one whose keys are all leased. O(({turns} + P) (log T + {turns})) for
// T tenants and P passed. The claim statement's snapshot, taken after
// the lock of the turns, is every step's: it sees every turn that a
// claim committed before this one took that lock.
const walkTurnsSQL = `, walk (tenant, vtime, weight, ready, loc, taken) AS (
	-- The start: before every turn. No tenant's virtual time is
	-- -infinity.
	SELECT '', '-infinity'::double precision, 1, 0, NULL::tid, 0
	WHERE (SELECT running FROM running)
	UNION ALL
	SELECT x.tenant, x.vtime, x.weight, c.ready, x.loc, w.taken + (c.ready > 0)::integer
	FROM walk AS w CROSS JOIN LATERAL (
		SELECT tn.tenant, tn.vtime, tn.weight, tn.ctid AS loc
		FROM {schema}.tenants AS tn
		WHERE tn.queue = $1 AND tn.vtime IS NOT NULL AND ROW(tn.vtime, tn.tenant) > ROW(w.vtime, w.tenant)
		ORDER BY tn.vtime, tn.tenant
		LIMIT 1
		FOR NO KEY UPDATE OF tn SKIP LOCKED
	) AS x CROSS JOIN LATERAL (
		-- ORDER BY: so that the count is of keys_tenant_ready, the
		-- tenant's keys only, in any plan.
		SELECT count(*)::integer AS ready FROM (
			SELECT FROM {schema}.keys AS k
			WHERE k.queue = $1 AND k.tenant = x.tenant AND k.ready_at <= statement_timestamp()
				AND NOT k.paused AND k.lanes = 0
			ORDER BY k.ready_at
			LIMIT {turns}
		) AS y
	) AS c
	WHERE w.taken < {turns}
)`

// fairWalkSQL is the part of a claim in a queue with tenants that walks
// the turns (walkTurnsSQL): cand, the tenants of the walk, the first
// {turns} tenants in the turns (smallest virtual time first, ties to the
// smaller name) with a key ready and those before them with none, each
// locked FOR NO KEY UPDATE, which lets the Adds' FOR KEY SHARE pass (see
// activateSQL), skipping those another transaction holds (an Add that
// changes the row, a claim of several leases of a key); each with its
// ready keys counted up to {turns}. The tenants after them start no
// earlier, so none of the {turns} earliest turns is theirs; those with
// no key ready take no turn.
//
// The tenants that the walk passed (those before the last of cand in
// the turns, or all if it found none) that have no key that can come
// ready leave the turns, as with pick_tenant (migration 008): so a
// tenant earns no turns while it has nothing to run. The walk returns
// them too, with no key ready, and cand calls tenant_leaves (migration
// 017) for each as it is read (gone), before the keys are picked: it
// locks the row FOR UPDATE, skipping it if an Add or a Release holds it
// FOR KEY SHARE, and takes it out unless tenant_has_keys (migration 010)
// finds a key in a snapshot taken after that lock: the statement's own
// snapshot misses the key of an Add that committed after it began. The
// versions before did the same in two parts of this statement, a scan
// and an UPDATE, which the executor set up on every claim; most claims
// take no tenant out of the turns, and call no function: for a tenant
// with no key ready, cand probes once for a key that can come ready.
// O({turns}) tenants, each by an index probe of at most {turns} keys,
// plus those passed: the number of tenants and keys adds nothing. With
// the queue paused it takes no turn. It ends inside cand, for the pick
// that follows to close.
const fairWalkSQL = walkTurnsSQL + `, cand AS MATERIALIZED (
	SELECT w.tenant, w.vtime, w.weight, w.ready, w.loc,
		-- ORDER BY: so that the probe is of keys_tenant_ready, the
		-- tenant's keys only, in any plan.
		CASE WHEN w.ready = 0 AND (SELECT k.ready_at FROM {schema}.keys AS k
				WHERE k.queue = $1 AND k.tenant = w.tenant AND k.ready_at IS NOT NULL ORDER BY k.ready_at LIMIT 1) IS NULL
			THEN {schema}.tenant_leaves($1, w.tenant) END AS gone
	FROM walk AS w WHERE w.loc IS NOT NULL
`

// fairPickSQL is claimPickSQL in a queue with tenants: it takes the next
// {turns} turns of the tenants, as {turns} calls of pick_tenant
// (migration 008) would, and in each a ready key of its tenant, locked;
// chargeSQL then advances the tenants' virtual times, once each. Of
// cand's tenants (fairWalkSQL), the turns are the earliest start times,
// a tenant's j-th (from 0) at its virtual time plus j/weight, ties to
// the smaller name; a turn j of a tenant takes the (j+1)-th of its
// oldest ready keys that it can lock (OFFSET j of a LIMIT 1 under which
// the rows are locked SKIP LOCKED: the keys it locked for the turns
// before count, being its own). So picked takes, of each tenant, as
// many of its oldest ready keys as it has turns, a row a turn, where a
// count of each tenant's turns and a join of it back to the tenants
// would cost the executor, for the common claim of one turn a tenant, a
// sort, an aggregate and a hash table more. A key that another
// transaction held at one turn's probe and let go before the next may
// come twice, and then makes one lease: a turn with no lease, which
// costs its tenant nothing. ready_at is here the start time of the key's
// turn: the claim returns its leases in that order, and a flight takes
// its keys in it (claimSharedTake); tenant is its tenant, which leased
// returns (leasedReturningFair) for the charge.
const fairPickSQL = fairWalkSQL + `), picked AS MATERIALIZED (
	SELECT k.queue, k.key_hash, t.start AS ready_at, t.tenant
	FROM (
		SELECT c.tenant, c.vtime + j::double precision / c.weight AS start, j
		FROM cand AS c CROSS JOIN LATERAL generate_series(0, c.ready - 1) AS j
		ORDER BY start, c.tenant
		LIMIT {turns}
	) AS t CROSS JOIN LATERAL (
		SELECT queue, key_hash
		FROM {schema}.keys
		WHERE queue = $1 AND tenant = t.tenant AND ready_at <= statement_timestamp() AND NOT paused
			AND lanes = 0
		ORDER BY ready_at
		OFFSET t.j
		LIMIT 1
		FOR UPDATE SKIP LOCKED
	) AS k
	LIMIT {keys}
)`

// leasedReturning ends the RETURNING list of claimSQL's leased; in a
// claim of fairPickSQL, leasedReturningFair adds each lease's tenant.
const (
	leasedReturning     = "picked.ready_at AS was_ready"
	leasedReturningFair = "picked.ready_at AS was_ready, picked.tenant"
)

// chargeSQL advances, once per claim statement, the virtual time of each
// tenant whose keys it leased by their number over its weight: the time
// of as many turns as it took. A turn whose key another claim held has
// no lease, and costs its tenant nothing. leased names each lease's
// tenant (leasedReturningFair). Each tenant's row is the version that
// walk (walkTurnsSQL) locked, at its place, found by the whole primary
// key: a plan that matched the tenant's name alone (the second column of
// the key) would read the key's entries of every tenant of the queue, and
// of every version that the claims left behind them, for each tenant.
const chargeSQL = `), charged AS (
	UPDATE {schema}.tenants AS t
	SET vtime = t.vtime + l.n / t.weight, last = t.vtime + l.n / t.weight
	FROM (SELECT tenant, count(*)::double precision AS n FROM leased GROUP BY tenant) AS l
		JOIN cand AS c USING (tenant)
	WHERE t.queue = $1 AND t.tenant = c.tenant AND t.ctid = c.loc
), upcoming AS (`

// ratedFairTurnsSQL is the pick of a rated claim in a queue with tenants
// (ratedFairPick), after fairWalkSQL: turns, each of cand's tenants with
// the number of its turns among the {turns} earliest, for which picked
// (then tokened) takes as many of its oldest ready keys, locked. ready_at
// is as in fairPickSQL.
const ratedFairTurnsSQL = `), turns AS MATERIALIZED (
	SELECT x.tenant, count(*)::integer AS turns FROM (
		SELECT c.tenant FROM cand AS c CROSS JOIN LATERAL generate_series(0, c.ready - 1) AS j
		ORDER BY c.vtime + j::double precision / c.weight, c.tenant
		LIMIT {turns}
	) AS x
	GROUP BY x.tenant
), picked AS MATERIALIZED (
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

// turnsLockSQL takes, until the transaction ends, the lock of the turns
// of queue $1 (named with its schema): the claims of a queue with tenants
// take turns, each in a statement of its own after this one, whose
// snapshot so sees every turn the claims before it took. Two claims at
// once would otherwise each take what its snapshot shows as the first
// turns, or one skip the tenants the other locked and take later turns
// instead, and the weights would not hold across processes.
const turnsLockSQL = `SELECT pg_advisory_xact_lock(hashtext('pacer.pgstore.turns'), hashtext($1::text))`

// finishAcksTurnsSQL is finishAcksSQL in a flight whose claim takes the
// tenants' turns: it takes the lock of the turns of queue $1, named $5
// (see turnsLock), once, after it has locked the Acks' key rows, which a
// claim holding the lock never waits for (it locks rows SKIP LOCKED). The
// flight's claim statement, after it, so reads a snapshot taken after the
// lock, as after turnsLockSQL, without a statement of its own for it.
const finishAcksTurnsSQL = `, n AS (
	SELECT set_config('pgstore.leases', coalesce(sum(k.want), 0)::text, true),
		pg_advisory_xact_lock(hashtext('pacer.pgstore.turns'), hashtext($5::text))
	FROM k
)`

// turnsLock returns the name of queue's lock of turnsLockSQL.
func (s *Store) turnsLock(queue string) string { return s.cfg.Schema + "." + queue }

// sharedTurns is {turns} of fairPickSQL after a finishAcksSQL: as many as
// the keys it left in pgstore.leases (see claimSharedTake), up to {keys}.
const sharedTurns = `least({keys}, current_setting('pgstore.leases')::integer)`

// tenantQueries are the statements of queues with tenants.
type tenantQueries struct {
	addReady, addBurst, addDelayed, release, fairQueue string
	// finishAcks is finishAcksSQL under the lock of the turns
	// (finishAcksTurnsSQL).
	finishAcks string
	// claim and claimShared are the claim statements (claimSQL) that take
	// the tenants' turns; claimNone leases keys added without a tenant
	// by a process that did not know of the queue's tenants yet. Each
	// with {keys} to fill in (see Store.claimSQL), and each with a rated
	// form, for a claim with a KeyRate (keyrate.go).
	claim, claimShared, claimNone                string
	claimRated, claimSharedRated, claimNoneRated string
}

// newTenantQueries makes them from the statements of queues without
// tenants, with the schema filled in already.
func newTenantQueries(schema string, q queries) tenantQueries {
	r := strings.NewReplacer("{schema}", schema)
	activate := func(tenant, weight string) string {
		return strings.NewReplacer("{tenant}", tenant, "{weight}", weight).Replace(r.Replace(activateSQL))
	}
	addReady := mustReplace(q.addReady, ", k AS (", activate("$8", "$9")+", k AS (")
	addReady = mustReplace(addReady, "(queue, key_hash, key, tail, ready_at)\n\tSELECT $1, sha256($2), $2, cardinality($3::bytea[]), statement_timestamp() FROM counted",
		"(queue, key_hash, key, tail, ready_at, tenant)\n\tSELECT $1, sha256($2), $2, cardinality($3::bytea[]), statement_timestamp(), $8::text FROM counted")
	addBurst := mustReplace(q.addBurst, ", k AS (", activate("$10", "$11")+", k AS (")
	addBurst = mustReplace(addBurst, "burst_capped, ready_at)\n\tSELECT $1, sha256($2), $2, c.n, c.n, statement_timestamp(), c.due, c.capped, c.due",
		"burst_capped, ready_at, tenant)\n\tSELECT $1, sha256($2), $2, c.n, c.n, statement_timestamp(), c.due, c.capped, c.due, $10::text")
	addDelayed := mustReplace(q.addDelayed, ", k AS (", activate("$9", "$10")+", k AS (")
	addDelayed = mustReplace(addDelayed, "(queue, key_hash, key, tail, ready_at, gate)\n\tSELECT $1, sha256($2), $2, cardinality($3::bytea[]), due.at, due.at FROM counted, due",
		"(queue, key_hash, key, tail, ready_at, gate, tenant)\n\tSELECT $1, sha256($2), $2, cardinality($3::bytea[]), due.at, due.at, $9::text FROM counted, due")
	pick := r.Replace(claimPickSQL)
	// The tenants' keys are not in one ready order: a claim of theirs
	// looks for the next ready key from the start of the queue.
	unfloored := func(claim string) string { return mustReplace(claim, claimFloorSQL, "'-infinity'") }
	// walk (walkTurnsSQL) refers to itself.
	recursive := func(claim string) string {
		return mustReplace(claim, "\nWITH running AS MATERIALIZED (", "\nWITH RECURSIVE running AS MATERIALIZED (")
	}
	fair := func(claim, turns string) string {
		claim = recursive(unfloored(claim))
		claim = mustReplace(claim, pick, r.Replace(strings.ReplaceAll(fairPickSQL, "{turns}", turns)))
		claim = mustReplace(claim, leasedReturning, leasedReturningFair)
		return mustReplace(claim, "), upcoming AS (", r.Replace(chargeSQL))
	}
	fairRated := func(claim, turns string) string {
		claim = mustReplace(recursive(unfloored(claim)), pick, ratedFairPick(schema, turns))
		claim = rateClaim(schema, mustReplace(claim, "), upcoming AS (", r.Replace(chargeSQL)))
		return mustReplace(claim, leasedReturning, leasedReturningFair)
	}
	const ready = "WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused AND (SELECT running FROM running)\n"
	return tenantQueries{
		claimRated:       fairRated(q.claim, "{keys}"),
		claimSharedRated: fairRated(q.claim, sharedTurns),
		claimNoneRated:   rateClaim(schema, mustReplace(unfloored(q.claim), pick, ratedPick(schema, true))),
		addReady:         addReady,
		addBurst:         addBurst,
		addDelayed:       addDelayed,
		claim:            fair(q.claim, "{keys}"),
		claimShared:      fair(q.claim, sharedTurns), // its turns are the keys to take
		claimNone:        mustReplace(unfloored(q.claim), ready, ready+"\t\tAND tenant IS NULL\n"),
		release:          r.Replace(releaseTenantSQL),
		fairQueue:        r.Replace(fairQueueSQL),
		finishAcks: mustReplace(q.finishAcks, `, n AS (
	SELECT set_config('pgstore.leases', coalesce(sum(k.want), 0)::text, true) FROM k
)`, finishAcksTurnsSQL),
	}
}

// fairCache remembers which queues have tenants: for good once seen, and
// that one has none for recheck, after which a Claim asks the server again.
type fairCache struct {
	mu sync.Mutex
	m  map[string]time.Time // queue -> when it was seen without tenants; zero: with
}

// recheck is how long a Claim trusts that a queue has no tenants.
const recheck = time.Second

// known reports whether queue is known to have tenants.
func (c *fairCache) known(queue string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.m[queue]
	return ok && at.IsZero()
}

// set notes whether queue has tenants.
func (c *fairCache) set(queue string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]time.Time)
	}
	if on {
		c.m[queue] = time.Time{}
	} else if at, ok := c.m[queue]; !ok || !at.IsZero() {
		c.m[queue] = time.Now()
	}
}

// fairQueue reports whether queue has tenants, asking the server when the
// cache does not know, or said no more than recheck ago.
func (s *Store) fairQueue(ctx context.Context, queue string) (bool, error) {
	s.fair.mu.Lock()
	at, ok := s.fair.m[queue]
	s.fair.mu.Unlock()
	if ok && (at.IsZero() || time.Since(at) < recheck) {
		return at.IsZero(), nil
	}
	var on bool
	if err := s.pool.QueryRow(ctx, s.tq.fairQueue, queue).Scan(&on); err != nil {
		return false, failed(ctx, "Claim", err)
	}
	s.fair.set(queue, on)
	return on, nil
}

// claimFair runs a Claim in a queue with tenants: in one transaction
// and round trip, the lock of the queue's turns (turnsLockSQL), then one
// statement that takes the next p.Keys turns of the tenants and leases a
// key in each; when no tenant has a key ready, a second for the keys
// added without a tenant by a process that did not know of the queue's
// tenants yet.
func (s *Store) claimFair(ctx context.Context, q batcher, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	_, args := s.claimStatement(queue, p)
	var (
		leases []store.Lease
		next   time.Duration
		b      pgx.Batch
	)
	b.Queue(turnsLockSQL, s.turnsLock(queue))
	b.Queue(s.claimSQL(claimForm{keys: p.Keys, kind: fairClaim, rated: p.KeyRate.On()}), args...).Query(func(rows pgx.Rows) error {
		var err error
		leases, next, err = scanClaim(queue, rows)
		return err
	})
	if err := q.SendBatch(ctx, &b).Close(); err != nil {
		return nil, 0, failed(ctx, "Claim", err)
	}
	if len(leases) > 0 || next != 0 {
		return leases, next, nil
	}
	return s.claimOn(ctx, q, s.claimSQL(claimForm{keys: p.Keys, kind: untenantedClaim, rated: p.KeyRate.On()}), queue, args)
}

// batcher runs statements and batches of them: the pool, or a
// connection of it.
type batcher interface {
	querier
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}
