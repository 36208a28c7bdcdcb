package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// storeFlags name the store a command works on: exactly one of -redis and
// -postgres, each with the option that tells its stores apart.
type storeFlags struct {
	redisURL, prefix string
	pgURL, schema    string
	json             bool
}

// register defines the flags on fs, each with its current value as its
// default, so that flags given before the command name (pacer -redis URL
// queues) carry over to the command's own flag set.
func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.redisURL, "redis", f.redisURL, "the Redis of the store, as a URL: redis://[user:password@]host:port/db (rediss:// for TLS)")
	fs.StringVar(&f.prefix, "redis-prefix", f.prefix, "with -redis: the store's key prefix (redisstore.Config.Prefix)")
	fs.StringVar(&f.pgURL, "postgres", f.pgURL, "the PostgreSQL of the store, as a URL: postgres://user[:password]@host:port/db")
	fs.StringVar(&f.schema, "schema", f.schema, "with -postgres: the store's schema (pgstore.Config.Schema)")
	fs.BoolVar(&f.json, "json", f.json, "write JSON for scripts in place of a table")
}

// defaultStoreFlags are the flags' defaults: the engines' own.
func defaultStoreFlags() storeFlags {
	return storeFlags{prefix: redisstore.DefaultPrefix, schema: pgstore.DefaultSchema}
}

// check returns a usageError unless exactly one store is named.
func (f *storeFlags) check() error {
	switch {
	case f.redisURL == "" && f.pgURL == "":
		return usagef("name the store: -redis URL or -postgres URL")
	case f.redisURL != "" && f.pgURL != "":
		return usagef("-redis and -postgres name two stores; give one")
	}
	return nil
}

// open connects to the store the flags name. The caller calls the
// returned close once done, after an error too.
func (f *storeFlags) open(ctx context.Context) (st store.Store, close func(), err error) {
	if f.redisURL != "" {
		return openRedis(ctx, f.redisURL, f.prefix)
	}
	return openPostgres(ctx, f.pgURL, f.schema)
}

// openRedis returns the redisstore.Store with prefix on the Redis at url.
func openRedis(ctx context.Context, url, prefix string) (store.Store, func(), error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, func() {}, usagef("-redis: %v", err)
	}
	c := redis.NewClient(opt)
	s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: prefix})
	if err != nil {
		c.Close()
		return nil, func() {}, err
	}
	return s, func() { s.Close(); c.Close() }, nil
}

// openPostgres returns the pgstore.Store on schema of the database at
// url. It refuses a schema that does not exist rather than let pgstore.New
// make it: a misspelt -schema would otherwise leave an empty store behind
// and show nothing.
func openPostgres(ctx context.Context, url, schema string) (store.Store, func(), error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, func() {}, usagef("-postgres: %v", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, func() {}, fmt.Errorf("-postgres: %w", err)
	}
	var exists bool
	err = pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists)
	if err == nil && !exists {
		err = fmt.Errorf("no schema %q in that database: give the store's -schema", schema)
	}
	if err != nil {
		pool.Close()
		return nil, func() {}, fmt.Errorf("-postgres: %w", err)
	}
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	if err != nil {
		pool.Close()
		return nil, func() {}, err
	}
	return s, func() { s.Close(); pool.Close() }, nil
}
