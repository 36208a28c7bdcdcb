package pgstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/pacerkit/pacer/store"
)

var _ store.FairTenants = (*Store)(nil)

// FairTenants implements store.FairTenants: see Tenants in the package
// doc.
func (s *Store) FairTenants() {}

// activateSQL, inside an Add's statement, gives tenant {tenant} a place in
// the turns if it has none, from the larger of its own virtual time and
// the queue's clock (the smallest virtual time in the turns), and sets
// its weight to {weight} when positive. When the tenant is in the turns
// with that weight already, the common case, it writes nothing and locks
// no row.
const activateSQL = `, tenant_up AS (
	INSERT INTO {schema}.tenants AS t (queue, tenant, vtime, last, weight)
	SELECT $1, {tenant}::text, c.v, c.v, greatest({weight}::integer, 1)
	FROM (SELECT coalesce((SELECT min(vtime) FROM {schema}.tenants WHERE queue = $1 AND vtime IS NOT NULL), 0) AS v) c
	WHERE NOT EXISTS (SELECT FROM {schema}.tenants WHERE queue = $1 AND tenant = {tenant}::text
		AND vtime IS NOT NULL AND ({weight}::integer = 0 OR weight = {weight}::integer))
	ON CONFLICT (queue, tenant) DO UPDATE SET
		weight = CASE WHEN {weight}::integer > 0 THEN {weight}::integer ELSE t.weight END,
		vtime = coalesce(t.vtime, greatest(t.last, EXCLUDED.vtime))
)`

// releaseTenantSQL gives the tenant of a key that Release put back in the
// ready order its place in the turns, if it left them while the key was
// held. $1 queue, $2 key.
const releaseTenantSQL = `
UPDATE {schema}.tenants AS t
SET vtime = greatest(t.last, coalesce((SELECT min(vtime) FROM {schema}.tenants WHERE queue = $1 AND vtime IS NOT NULL), t.last))
WHERE t.queue = $1 AND t.vtime IS NULL
	AND t.tenant = (SELECT tenant FROM {schema}.keys WHERE queue = $1 AND key_hash = sha256($2))`

// fairQueueSQL reports whether a queue has tenants.
const fairQueueSQL = `SELECT EXISTS (SELECT FROM {schema}.tenants WHERE queue = $1)`

// tenantQueries are the statements of queues with tenants.
type tenantQueries struct {
	addReady, addBurst, addDelayed, claim, claimNone, release, fairQueue string
}

// newTenantQueries makes them from the statements of queues without
// tenants, with the schema filled in already.
func newTenantQueries(schema string, q queries) tenantQueries {
	r := strings.NewReplacer("{schema}", schema)
	activate := func(tenant, weight string) string {
		return strings.NewReplacer("{tenant}", tenant, "{weight}", weight).Replace(r.Replace(activateSQL))
	}
	mustReplace := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			panic("pgstore: a tenant statement lost its anchor: " + old)
		}
		return strings.Replace(s, old, new, 1)
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
	const pick = "WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused AND (SELECT running FROM running)\n"
	claim := mustReplace(q.claim, "), picked AS MATERIALIZED (", `), turn AS MATERIALIZED (
	SELECT CASE WHEN (SELECT running FROM running) THEN {schema}.pick_tenant($1) END AS tenant
), picked AS MATERIALIZED (`)
	claim = r.Replace(mustReplace(claim, pick, pick+"\t\tAND tenant = (SELECT tenant FROM turn)\n"))
	claimNone := mustReplace(q.claim, pick, pick+"\t\tAND tenant IS NULL\n")
	return tenantQueries{
		addReady:   addReady,
		addBurst:   addBurst,
		addDelayed: addDelayed,
		claim:      strings.Replace(claim, "{keys}", "1", 1),
		claimNone:  strings.Replace(claimNone, "{keys}", "1", 1),
		release:    r.Replace(releaseTenantSQL),
		fairQueue:  r.Replace(fairQueueSQL),
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

// claimFair runs a Claim in a queue with tenants: one statement per key,
// each taking the turn of one tenant (pick_tenant) and leasing its oldest
// ready key; when no tenant has one, the keys added without a tenant by a
// process that did not know of the queue's tenants yet.
func (s *Store) claimFair(ctx context.Context, q querier, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	_, args := s.claimStatement(queue, p)
	var (
		leases []store.Lease
		next   time.Duration
	)
	for len(leases) < p.Keys {
		ls, n, err := s.claimOn(ctx, q, s.tq.claim, queue, args)
		if err != nil {
			return nil, 0, err
		}
		if len(ls) == 0 && n == 0 {
			ls, n, err = s.claimOn(ctx, q, s.tq.claimNone, queue, args)
			if err != nil {
				return nil, 0, err
			}
		}
		leases, next = append(leases, ls...), n
		if len(ls) == 0 {
			break
		}
	}
	return leases, next, nil
}

// claimOn runs the claim statement sql.
func (s *Store) claimOn(ctx context.Context, q querier, sql, queue string, args []any) ([]store.Lease, time.Duration, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, 0, failed(ctx, "Claim", err)
	}
	defer rows.Close()
	leases, next, err := scanClaim(queue, rows)
	if err != nil {
		return nil, 0, failed(ctx, "Claim", err)
	}
	return leases, next, nil
}
