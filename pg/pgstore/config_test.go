package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
)

// TestConfigErrors: New refuses a bad Config, naming the field, before it
// touches the database.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	// A pool connects lazily: this one never does, since nothing listens.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	require.NoError(t, err)
	defer pool.Close()
	for _, tc := range []struct {
		cfg   pgstore.Config
		field string
	}{
		{pgstore.Config{Schema: "a-b"}, "Config.Schema"},
		{pgstore.Config{Schema: `a"b`}, "Config.Schema"},
		{pgstore.Config{Schema: "1abc"}, "Config.Schema"},
		{pgstore.Config{Schema: "a.b"}, "Config.Schema"},
		{pgstore.Config{Schema: strings.Repeat("s", 56)}, "Config.Schema"},
		{pgstore.Config{PollInterval: -time.Second}, "Config.PollInterval"},
	} {
		_, err := pgstore.New(t.Context(), pool, tc.cfg)
		require.ErrorContains(t, err, "pgstore: "+tc.field, "%+v", tc.cfg)
	}
	_, err = pgstore.New(t.Context(), nil, pgstore.Config{})
	require.ErrorContains(t, err, "pgstore: New needs a pool")
}
