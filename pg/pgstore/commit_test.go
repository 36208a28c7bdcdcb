package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestFailedCommitIsAnError: a statement whose row came back but whose
// commit then failed is an error, and changed nothing. PostgreSQL sends a
// statement's rows before its implicit transaction commits, and reports a
// commit that fails after them, before it is ready for the next query; a
// server that stops while the commit waits for the disk sends the rows and
// then closes the connection. Here a deferred constraint trigger, which
// runs at the commit, refuses the marked rows.
func TestFailedCommitIsAnError(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema, PollInterval: time.Hour})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	refuseAtCommit(t, pool, schema, "messages", "convert_from(NEW.value, 'UTF8') = 'refused'")
	refuseAtCommit(t, pool, schema, "dead_letters", "NEW.error = 'refused'")

	t.Run("Add", func(t *testing.T) {
		err := s.Add(ctx, "add", "k", vals("refused"), store.AddParams{})
		requireRefusedAtCommit(t, err)
		st, err := s.Stats(ctx, "add")
		require.NoError(t, err)
		require.Zero(t, st.Values, "the refused Add stored nothing")
	})

	t.Run("Drop", func(t *testing.T) {
		require.NoError(t, s.Add(ctx, "drop", "k", vals("1"), store.AddParams{}))
		ls, _, err := s.Claim(ctx, "drop", store.ClaimParams{Keys: 1, TTL: time.Minute})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Drop, Err: "refused"})
		requireRefusedAtCommit(t, err)
		st, err := s.Stats(ctx, "drop")
		require.NoError(t, err)
		require.Equal(t, 1, st.Values, "the refused Drop removed nothing")
		require.Equal(t, 1, st.Leased, "the refused Drop ended no lease")
		require.Zero(t, st.Dead)
	})

	t.Run("Redrive", func(t *testing.T) {
		require.NoError(t, s.Add(ctx, "redrive", "k", vals("1"), store.AddParams{Wait: time.Hour}))
		_, err := pool.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema}.Sanitize()+
			".dead_letters (queue, key, vals, error, attempt, dropped_at) VALUES ('redrive', 'k', ARRAY['refused'::bytea], 'e', 1, now())")
		require.NoError(t, err)
		dls, err := s.DeadLetters(ctx, "redrive", 0, 10)
		require.NoError(t, err)
		require.Len(t, dls, 1)
		_, err = s.Redrive(ctx, "redrive", dls[0].ID)
		requireRefusedAtCommit(t, err)
		dls, err = s.DeadLetters(ctx, "redrive", 0, 10)
		require.NoError(t, err)
		require.Len(t, dls, 1, "the refused Redrive kept its dead letter")
	})
}

// refuseAtCommit makes the commits of schema's transactions that insert a
// row of table for which cond holds fail.
func refuseAtCommit(t *testing.T, pool interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, schema, table, cond string) {
	t.Helper()
	q := pgx.Identifier{schema}.Sanitize()
	fn := q + ".refuse_" + table
	_, err := pool.Exec(t.Context(), `
CREATE FUNCTION `+fn+`() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF `+cond+` THEN
		RAISE EXCEPTION 'refused at commit' USING ERRCODE = 'check_violation';
	END IF;
	RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON `+q+`.`+table+`
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION `+fn+`();`)
	require.NoError(t, err)
}

// requireRefusedAtCommit checks that err is the refusal of
// refuseAtCommit's trigger.
func requireRefusedAtCommit(t *testing.T, err error) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want the commit's error, got %v", err)
	require.Equal(t, "refused at commit", pgErr.Message)
}
