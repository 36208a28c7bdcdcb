package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/pacerkit/pacer/redis/redisstore"
)

// apiBucketName is the shared bucket of the task API in Redis: one for
// every instance with the same prefix, as the API's limit is one for the
// whole integration.
const apiBucketName = "tasks-api"

// A shared is what -redis puts in Redis: the Runner's store (the users'
// debounce and queue) and the task API's bucket with its pause.
type shared struct {
	rdb     *redis.Client
	store   *redisstore.Store
	limiter apiLimiter
}

// openRedis connects to the Redis at url and opens the store and the
// bucket under prefix.
func openRedis(ctx context.Context, url, prefix string, rate float64, burst int) (*shared, error) {
	rdb, err := dialRedis(ctx, url)
	if err != nil {
		return nil, err
	}
	st, err := redisstore.New(ctx, rdb, redisstore.Config{Prefix: prefix})
	if err != nil {
		rdb.Close()
		return nil, err
	}
	lim, err := redisrate.NewBucket(ctx, rdb, redisrate.BucketConfig{Rate: rate, Burst: burst, Name: apiBucketName, Prefix: prefix})
	if err != nil {
		st.Close()
		rdb.Close()
		return nil, err
	}
	return &shared{rdb: rdb, store: st, limiter: lim}, nil
}

// Close closes the store, then the client. The state stays in Redis.
func (s *shared) Close() error {
	return errors.Join(s.store.Close(), s.rdb.Close())
}

// dialRedis connects to the Redis at url and checks that it answers.
func dialRedis(ctx context.Context, url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("-redis %s: %w", url, err)
	}
	return rdb, nil
}

// deletePrefix deletes every key whose name starts with "{prefix:", as the
// store's and the bucket's keys do: what a demo or test run left.
func deletePrefix(ctx context.Context, rdb *redis.Client, prefix string) error {
	iter := rdb.Scan(ctx, 0, "{"+prefix+":*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	// One key at a time: keys of different hash slots cannot go in one
	// DEL on a cluster.
	for _, k := range keys {
		if err := rdb.Del(ctx, k).Err(); err != nil {
			return err
		}
	}
	return nil
}
