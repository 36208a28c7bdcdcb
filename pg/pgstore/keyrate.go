package pgstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/pacerkit/pacer/store"
)

var _ store.KeyRateClaimer = (*Store)(nil)

// ClaimsKeyRate implements store.KeyRateClaimer: every claim statement
// keeps ClaimParams.KeyRate, with the key's theoretical arrival time T in
// the key's row, and in the table key_rates for a key whose row may go
// (migration 015). See "A rate per key" in the package doc.
func (s *Store) ClaimsKeyRate() bool { return true }

// A claim with a KeyRate that is on runs its own form of each claim
// statement (claimForm.rated), made from the form without it by the
// replacements below, so that a claim without one runs the statements
// and plans it always ran. The rated forms take two more parameters:
// $5 the KeyRate's interval and $6 its tolerance, (Burst-1)*Interval.
//
// A rated claim locks the first {keys} ready keys, as a claim without a
// KeyRate does, and reads their T (ratedPickSQL, keyTSQL). Those without a
// token it defers until their tokens are due, as a Finish with Defer
// would leave them, in the UPDATE that leases the others
// (ratedLeasedSetSQL), and it picks as many more ready keys in their
// place, after them in the ready order, of those that have a token,
// stepping over those that have none, which a later claim defers. Each
// key it leases takes a token in its row (takeTokensSQL). A claim that
// finds a token for each key it locks so walks the ready order once, as a
// claim without a KeyRate does, and reads key_rates only for a row made
// since its key emptied. T is read from the locked row, or, in
// key_rates, from the statement's snapshot: a key row that the claim
// locks as ready was made ready by a statement that committed after the
// claim that took the key's last token, which the snapshot so sees.

// ratedSpare is how many keys past those it takes turns for a rated claim
// of a queue with tenants looks at for keys without a token to defer.
const ratedSpare = "8"

// keyTSQL is the T of key row {row}: its rate_t, written by the claims
// that leased it with a KeyRate, else, for a row made since the key last
// emptied, what key_rates kept of it, read only then. NULL: none.
const keyTSQL = `coalesce({row}.rate_t, (SELECT kr.t FROM {schema}.key_rates AS kr
			WHERE kr.queue = {row}.queue AND kr.key_hash = {row}.key_hash))`

// tokenSQL is true when key row {row} has a token now: no T, or a T no
// later than now plus the tolerance.
const tokenSQL = `coalesce(` + keyTSQL + ` <= statement_timestamp() + $6::interval, true)`

// ratedPickSQL is claimPickSQL for a rated claim, with untokened, the keys
// it locked without a token and their T, and picked's rows with wait:
// when the token of a key to defer is due, NULL for a key to lease;
// {untenanted} and {untenanted:k} are empty, or the condition that the
// key has no tenant (claimNone, tenant.go). The second walk, instead, starts where the first stopped,
// and only if a key of the first had no token: LIMIT 0 reads no row.
var ratedPickSQL = `, first AS MATERIALIZED (
	SELECT f.queue, f.key_hash, f.ready_at, ` + strings.ReplaceAll(keyTSQL, "{row}", "f") + ` AS t
	FROM (
		SELECT queue, key_hash, ready_at, rate_t
		FROM {schema}.keys
		WHERE queue = $1 AND ready_at <= statement_timestamp() AND NOT paused AND (SELECT running FROM running)
			AND lanes = 0{untenanted}
		ORDER BY ready_at
		LIMIT {keys}
		FOR UPDATE SKIP LOCKED
	) AS f
), untokened AS MATERIALIZED (
	SELECT queue, key_hash, t FROM first WHERE t > statement_timestamp() + $6::interval
), instead AS MATERIALIZED (
	SELECT k.queue, k.key_hash, k.ready_at
	FROM {schema}.keys AS k
	WHERE k.queue = $1 AND k.ready_at <= statement_timestamp() AND NOT k.paused AND k.lanes = 0{untenanted:k}
		AND k.ready_at >= (SELECT max(ready_at) FROM first)
		AND k.key_hash <> ALL (ARRAY(SELECT key_hash FROM first))
		AND ` + tokenSQL + `
	ORDER BY k.ready_at
	LIMIT (SELECT count(*) FROM untokened)
	FOR UPDATE OF k SKIP LOCKED
), picked AS MATERIALIZED (
	SELECT queue, key_hash, ready_at,
		CASE WHEN t > statement_timestamp() + $6::interval THEN t - $6::interval END AS wait
	FROM first
	UNION ALL
	SELECT queue, key_hash, ready_at, NULL FROM instead
)`

// fairUntokenedSQL is untokened of ratedPickSQL in a queue with tenants,
// whose claim picks only keys that have a token (ratedFairPick): the
// ready keys without a token of each tenant whose turns the claim takes,
// among its first turns+ratedSpare, locked, with their T.
var fairUntokenedSQL = `, untokened AS MATERIALIZED (
	SELECT k.queue, k.key_hash, ` + strings.ReplaceAll(keyTSQL, "{row}", "k") + ` AS t
	FROM turns CROSS JOIN LATERAL (
		SELECT x.queue, x.key_hash FROM (
			SELECT y.queue, y.key_hash, y.rate_t FROM {schema}.keys AS y
			WHERE y.queue = $1 AND y.tenant = turns.tenant AND y.ready_at <= statement_timestamp() AND NOT y.paused
				AND y.lanes = 0
			ORDER BY y.ready_at
			LIMIT turns.turns + ` + ratedSpare + `
		) AS x
		WHERE NOT ` + strings.ReplaceAll(tokenSQL, "{row}", "x") + `
	) AS x
	JOIN {schema}.keys AS k ON k.queue = x.queue AND k.key_hash = x.key_hash
	-- k's conditions in a subquery of their own (OFFSET 0), so that k is
	-- reached by its primary key, not by a walk of keys_ready.
	CROSS JOIN LATERAL (SELECT WHERE k.ready_at <= statement_timestamp() AND NOT k.paused AND k.lanes = 0 OFFSET 0) AS z
	FOR UPDATE OF k SKIP LOCKED
)`

// ratedLeasedSetSQL is the SET list of the UPDATE of a rated claim, which
// writes the keys it leases and those it defers (untokened) at once, as
// their rows of picked say (wait: NULL to lease, else when the key's token
// is due), where a second UPDATE of keys would open every index of keys
// for each claim, whether it defers a key or not (see removeBatchSQL). A
// key it defers is left as a Finish with Defer leaves it, and as
// defer_for_token (migration 015) leaves a key of one lease: its head
// batch kept, or the one a lease would take now fixed, no lease, fence
// or attempt taken (a lapsed lease counts its attempt now, as its next
// lease would), ready when its token is due.
var ratedLeasedSetSQL = `		burst = CASE WHEN picked.wait IS NULL AND k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END,
		batch = CASE WHEN k.batch > 0 THEN k.batch
			ELSE greatest(least(least(k.tail - CASE WHEN k.burst_due <= statement_timestamp() THEN 0 ELSE k.burst END,
				seen.tail) - k.head, $2::bigint,
				CASE WHEN k.gate > statement_timestamp() THEN (
					SELECT min(d.seq) - k.head FROM {schema}.messages AS d
					WHERE d.queue = k.queue AND d.key_hash = k.key_hash AND d.seq >= k.head
						AND d.due_at IS NOT NULL AND d.due_at > statement_timestamp()
				) END), 0) END,
		attempt = CASE WHEN k.leased_until IS NULL THEN k.attempt ELSE k.attempt + 1 END,
		fence = CASE WHEN picked.wait IS NULL THEN nextval('{schema}.fences') ELSE k.fence END,
		leased_at = CASE WHEN picked.wait IS NULL THEN statement_timestamp() ELSE k.leased_at END,
		holder = CASE WHEN picked.wait IS NULL THEN $4::bytea ELSE k.holder END,
		leased_until = CASE WHEN picked.wait IS NULL THEN coalesce(statement_timestamp() + $3::interval, 'infinity') END,
		ready_at = coalesce(picked.wait, statement_timestamp() + $3::interval, 'infinity'),
		retrying = false,
		rate_t = CASE WHEN picked.wait IS NULL
			THEN greatest(` + strings.ReplaceAll(keyTSQL, "{row}", "k") + `, statement_timestamp()) + $5::interval
			ELSE k.rate_t END,
		rate_tol = CASE WHEN picked.wait IS NULL THEN $6::interval ELSE k.rate_tol END
`

// ratedFairPickedSQL ends the pick of a rated claim of a queue with
// tenants: picked is the keys with a token that it takes turns for
// (tokened), to lease, and those to defer, as ratedPickSQL's.
const ratedFairPickedSQL = `, picked AS MATERIALIZED (
	SELECT queue, key_hash, ready_at, tenant, NULL::timestamptz AS wait FROM tokened
	UNION ALL
	SELECT queue, key_hash, NULL, NULL, t - $6::interval FROM untokened
)`

// ratedSharedTake is claimSharedTake of a rated claim: the keys to defer
// and then the first of those to lease.
const ratedSharedTake = `(SELECT * FROM picked ORDER BY wait IS NULL, ready_at, key_hash
		LIMIT current_setting('pgstore.leases')::bigint + (SELECT count(*) FROM untokened)) AS picked`

// takeTokensSQL comes before the leases CTE of a rated claim. Each key
// leased took a token in the UPDATE, T = max(T, now) + Interval in its
// row's rate_t, with the tolerance, by which Key tells a key deferred for
// its token; a lease of the key's last values also keeps T in key_rates,
// where the key finds it if its row goes with those values (only a lease
// of a key's last values can leave it empty: values come only at the
// tail).
const takeTokensSQL = `), leased AS (
	SELECT * FROM written WHERE wait IS NULL
), tokens AS (
	INSERT INTO {schema}.key_rates AS kr (queue, key_hash, t, tol)
	SELECT $1, l.key_hash, l.rate_t, $6::interval FROM leased AS l
	WHERE l.head + l.batch >= l.tail
	ON CONFLICT (queue, key_hash) DO UPDATE SET t = EXCLUDED.t, tol = EXCLUDED.tol
), leases AS (`

// The upcoming of a rated claim leaves the keys it deferred out of the
// ready keys, which its snapshot still sees ready, and counts them by
// when they are ready again.
const (
	upcomingLeased      = `AND key_hash <> ALL (ARRAY(SELECT key_hash FROM leased))`
	ratedUpcomingLeased = `AND key_hash <> ALL (ARRAY(SELECT key_hash FROM leased UNION ALL SELECT key_hash FROM untokened))`
	upcomingNext        = `least((SELECT ready_at FROM upcoming), (SELECT leased_until FROM leased LIMIT 1))`
	ratedUpcomingNext   = `least((SELECT ready_at FROM upcoming), (SELECT leased_until FROM leased LIMIT 1),
		(SELECT min(t) - $6::interval FROM untokened))`
)

// rateClaim returns the rated form of claim statement sql, whose picked
// CTE the caller replaced with a rated one already (with wait); schema is
// quoted. The UPDATE of leased writes the keys to defer too, and is
// named written; leased is the keys it leased.
func rateClaim(schema, sql string) string {
	r := strings.NewReplacer("{schema}", schema)
	const head = "), leased AS (\n\tUPDATE " // then the table, " AS k SET"
	start := strings.Index(sql, head)
	set := strings.Index(sql[start:], " SET\n") + start + len(" SET\n")
	from := strings.Index(sql[set:], "\tFROM ") + set
	if start < 0 || set < start || from < set {
		panic("pgstore: the claim statement lost its leased CTE")
	}
	sql = sql[:start] + "), written AS (\n\tUPDATE " + sql[start+len(head):set] + r.Replace(ratedLeasedSetSQL) + sql[from:]
	sql = mustReplace(sql, "AND (k.batch > 0 OR", "AND (picked.wait IS NOT NULL OR k.batch > 0 OR")
	sql = mustReplace(sql, "picked.ready_at AS was_ready\n", "picked.ready_at AS was_ready, picked.wait, k.tail, k.rate_t\n")
	sql = mustReplace(sql, "), leases AS (", r.Replace(takeTokensSQL))
	if strings.Contains(sql, claimSharedTake) {
		sql = mustReplace(sql, claimSharedTake, ratedSharedTake)
	}
	sql = mustReplace(sql, upcomingLeased, ratedUpcomingLeased)
	return mustReplace(sql, upcomingNext, ratedUpcomingNext)
}

// mustReplace replaces the one old in s with new, and panics if s has
// none: a statement made from another lost its anchor.
func mustReplace(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("pgstore: a statement lost its anchor: " + old)
	}
	return strings.Replace(s, old, new, 1)
}

// ratedPick returns ratedPickSQL with the schema filled in, for the keys
// added without a tenant alone if untenanted.
func ratedPick(schema string, untenanted bool) string {
	r := strings.NewReplacer("{schema}", schema, "{untenanted:k}", "", "{untenanted}", "")
	if untenanted {
		r = strings.NewReplacer("{schema}", schema, "{untenanted:k}", " AND k.tenant IS NULL",
			"{untenanted}", " AND tenant IS NULL")
	}
	return r.Replace(strings.ReplaceAll(ratedPickSQL, "{row}", "k"))
}

// ratedFairPick returns the pick of a rated claim in a queue with
// tenants (fairWalkSQL and ratedFairTurnsSQL), with {turns} as given and
// the schema filled in: each tenant's keys without a token are stepped
// over, and those among its first deferred.
func ratedFairPick(schema, turns string) string {
	const lock = `			ORDER BY ready_at
			LIMIT turns.turns
			FOR UPDATE SKIP LOCKED`
	pick := mustReplace(fairWalkSQL+ratedFairTurnsSQL, lock, `				AND `+strings.ReplaceAll(tokenSQL, "{row}", "keys")+"\n"+lock)
	pick = mustReplace(pick, "), picked AS MATERIALIZED (", "), tokened AS MATERIALIZED (")
	r := strings.NewReplacer("{schema}", schema, "{turns}", turns)
	return r.Replace(pick + fairUntokenedSQL + ratedFairPickedSQL)
}

// rateArgs returns the arguments of a rated claim statement, after the
// four of claimStatement.
func rateArgs(r store.KeyRate) []any {
	return []any{interval(r.Interval), interval(r.Tolerance())}
}

// sweepEvery is how often a Store removes, per queue it claims with a
// KeyRate, the rows of key_rates whose T passed: they say no more than a
// missing row does (a full bucket), and the sweep keeps the table to about
// the keys leased in the last sweepEvery plus Burst*Interval.
const sweepEvery = time.Minute

// sweepSQL removes the rows of a queue's keys whose T passed. It reads
// every row of the queue in key_rates: O(keys leased in the last
// sweepEvery plus the span of a bucket). It skips the rows that a claim
// holds, which it would otherwise wait for, locking the others in an
// order that a claim of several keys may lock them against.
const sweepSQL = `
DELETE FROM {schema}.key_rates
WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM {schema}.key_rates
	WHERE queue = $1 AND t < statement_timestamp()
	FOR UPDATE SKIP LOCKED
))`

// sweeps remembers when a Store last swept each queue.
type sweeps struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether queue is to be swept now, and if so notes it as
// swept.
func (w *sweeps) due(queue string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = make(map[string]time.Time)
	}
	if at, ok := w.last[queue]; ok && now.Sub(at) < sweepEvery {
		return false
	}
	if len(w.last) >= maxSweeps {
		clear(w.last)
	}
	w.last[queue] = now
	return true
}

// maxSweeps bounds the queues a Store remembers sweeping.
const maxSweeps = 1024

// sweep removes queue's rows of key_rates whose T passed, at most once
// per sweepEvery per Store, before a claim of queue with a KeyRate.
func (s *Store) sweep(ctx context.Context, queue string) error {
	if !s.sweeps.due(queue, time.Now()) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, s.q.sweepRates, queue); err != nil {
		return failed(ctx, "Claim", err)
	}
	return nil
}
