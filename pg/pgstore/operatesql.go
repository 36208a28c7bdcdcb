package pgstore

// The statements of store.Operator (migration 005). A paused queue is a
// row of paused_queues, which the claim statements read once each
// (runningSQL). A paused key is a key row with paused set, which
// keys_ready leaves out, so that no claim reads it however long it waits;
// its ready_at goes on as its values say, so that a resumed key whose
// delay passed is ready at once. A paused key without values keeps an
// empty row (the parked rows of removeBatchSQL), which ResumeKey removes.

// pauseQueueSQL pauses a queue, and changes a row if it was running.
//
// $1 queue.
const pauseQueueSQL = `
INSERT INTO {schema}.paused_queues (queue, paused_at) VALUES ($1, statement_timestamp())
ON CONFLICT (queue) DO NOTHING`

// resumeQueueSQL resumes a queue, and changes a row if it was paused.
//
// $1 queue.
const resumeQueueSQL = `
DELETE FROM {schema}.paused_queues WHERE queue = $1`

// queuePausedSQL reports whether a queue is paused: one read of
// paused_queues by its primary key.
//
// $1 queue.
const queuePausedSQL = `SELECT NOT {running}`

// pauseKeySQL pauses a key, making its row, empty, if it has none. It
// returns one row: whether it paused the key, which it does unless the
// key was paused already, and whether the key's row is another key's, one
// of the queue with the same SHA-256 (see Names in the package doc),
// which it then leaves as it is.
//
// $1 queue, $2 key.
const pauseKeySQL = `
WITH k AS (
	INSERT INTO {schema}.keys AS k (queue, key_hash, key, tail, ready_at, paused)
	VALUES ($1, sha256($2), $2, 0, 'infinity', true)
	ON CONFLICT (queue, key_hash) DO UPDATE SET paused = true
	WHERE k.key = EXCLUDED.key AND NOT k.paused
	RETURNING 1
)
SELECT EXISTS (SELECT FROM k), EXISTS (
	SELECT FROM {schema}.keys WHERE queue = $1 AND key_hash = sha256($2) AND key <> $2)`

// resumeKeySQL resumes a paused key: a key ready by now goes to the tail
// of the ready order, one that waits keeps its time, and an empty row
// goes. It returns a row, with no column, if the key was paused.
//
// $1 queue, $2 key.
const resumeKeySQL = `
WITH k AS MATERIALIZED (
	SELECT queue, key_hash, tail = head AS empty FROM {schema}.keys
	WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND paused
	FOR UPDATE
), gone AS (
	DELETE FROM {schema}.keys AS d USING k
	WHERE d.queue = k.queue AND d.key_hash = k.key_hash AND k.empty
), resumed AS (
	UPDATE {schema}.keys AS u SET
		paused = false,
		ready_at = CASE WHEN u.ready_at <= statement_timestamp() THEN statement_timestamp() ELSE u.ready_at END
	FROM k
	WHERE u.queue = k.queue AND u.key_hash = k.key_hash AND NOT k.empty
)
SELECT FROM k`

// retryNowSQL makes a key that waits for a Retry's or a Defer's delay (a
// head batch kept, no lease, not held) ready now, at the tail of the ready
// order, with its batch and attempt as they are. It changes no row for any
// other key, nor for a key of lanes (retry_lanes, lanes.go).
//
// $1 queue, $2 key.
const retryNowSQL = `
UPDATE {schema}.keys SET ready_at = statement_timestamp()
WHERE queue = $1 AND key_hash = sha256($2) AND key = $2
	AND batch > 0 AND leased_until IS NULL AND NOT held AND ready_at > statement_timestamp() AND lanes = 0`

// lockKeySQL locks a key's row, for the statement after it in its
// transaction (dropKeySQL) to read a snapshot taken once it holds the
// lock: one that sees every value of the key. A statement that locked the
// row itself would read the values of its own snapshot, taken before it
// waited for the lock, which may miss those of an Add that committed
// meanwhile; and it would leave their rows behind.
//
// $1 queue, $2 key.
const lockKeySQL = `
SELECT FROM {schema}.keys WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 FOR UPDATE`

// dropKeySQL moves all of a key's values to one dead letter, in order, as
// removeBatchSQL removes a batch: its batch is all of them (an open burst
// included, none left open), and its attempt is the head batch's as
// store.KeyInfo shows it (keyInfoSQL). The key's row goes, or, if paused,
// stays empty (the parked rows of removeBatchSQL), either way with no lease: the holder's Extend
// and Finish find no lease of their fence. It returns one row, with the
// number of values moved; a key without values has no row in k, and so
// gets no dead letter. It follows lockKeySQL in a transaction.
//
// $1 queue, $2 key, $3 error.
const dropKeySQL = `
WITH k AS MATERIALIZED (
	SELECT queue, key_hash, key, head, tail, tail - head AS batch, burst_due, gate, paused, 0 AS open,
		CASE WHEN held OR leased_until > statement_timestamp() THEN attempt WHEN batch = 0 THEN 0
			WHEN retrying THEN attempt - 1 ELSE attempt END AS attempt
	FROM {schema}.keys
	WHERE queue = $1 AND key_hash = sha256($2) AND key = $2 AND tail > head
	FOR UPDATE
)` + removeBatchSQL + `
), dead AS (
	INSERT INTO {schema}.dead_letters (queue, key, vals, error, attempt, dropped_at)
	SELECT $1, k.key, array_agg(done.value ORDER BY done.seq), $3, k.attempt, statement_timestamp()
	FROM done, k
	GROUP BY k.key, k.attempt
)
SELECT count(*) FROM done`
