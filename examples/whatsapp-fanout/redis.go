package main

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pacerkit/pacer/redis/redismutex"
	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/redis/go-redis/v9"
)

// redisName names the program's locks, buckets and progress in Redis.
const redisName = "whatsapp-fanout"

// openShared connects to the Redis at url and sets in cfg what instances
// given the same url and prefix share there: per account a lock
// (redismutex, with a lease of lockTTL) and a token bucket (redisrate), and
// the progress of every reminder. close releases the connection and the
// locks still held.
func openShared(ctx context.Context, cfg *config, url, prefix string, lockTTL time.Duration) (close func() error, err error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	client := redis.NewClient(opt)
	defer func() {
		if err != nil {
			client.Close()
		}
	}()
	if err := client.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("-redis %s: %w", url, err)
	}
	locker, err := redismutex.New(ctx, client, redismutex.Config{TTL: lockTTL, Prefix: prefix, Name: redisName})
	if err != nil {
		return nil, err
	}
	limits, err := redisrate.NewKeyed(ctx, client, redisrate.KeyedConfig{Rate: cfg.Rate / 60, Burst: cfg.Burst, Name: redisName, Prefix: prefix})
	if err != nil {
		return nil, errors.Join(err, locker.Close())
	}
	cfg.Locks = locker
	cfg.Limits = &redisLimits{k: limits, byAccount: map[string]*redisrate.KeyLimiter{}}
	cfg.Progress = newRedisProgress(client, cmp.Or(prefix, redismutex.DefaultPrefix))
	return func() error { return errors.Join(locker.Close(), client.Close()) }, nil
}

var (
	//go:embed lua/*.lua
	luaFiles      embed.FS
	addProgress   = newScript("lua/progress_add.lua")
	claimProgress = newScript("lua/progress_claim.lua")
	writeProgress = newScript("lua/progress_write.lua")
)

func newScript(name string) *redis.Script {
	b, err := luaFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return redis.NewScript(string(b))
}

// redisProgress keeps every reminder's progress in Redis, where every
// instance reads it: a hash per reminder ("{Prefix:whatsapp-fanout}:
// reminder:ID", with the progress as JSON and the fence it was written
// under) and the list of reminder ids ("{Prefix:whatsapp-fanout}:
// reminders"), all in one hash slot. A write carries the fence of the
// account lock held while the reminder changed, and Redis refuses it if a
// later holder has written already: an instance that lost its lock cannot
// overwrite its successor's progress.
type redisProgress struct {
	client redis.UniversalClient
	tag    string // "{Prefix:whatsapp-fanout}"
}

func newRedisProgress(client redis.UniversalClient, prefix string) *redisProgress {
	return &redisProgress{client: client, tag: "{" + prefix + ":" + redisName + "}"}
}

func (r *redisProgress) list() string              { return r.tag + ":reminders" }
func (r *redisProgress) reminder(id string) string { return r.tag + ":reminder:" + id }

func (r *redisProgress) load(ctx context.Context, add []reminder) (progress, error) {
	for _, rm := range add {
		b, err := json.Marshal(newReminderState(rm))
		if err != nil {
			return progress{}, err
		}
		if err := addProgress.Run(ctx, r.client, []string{r.reminder(rm.ID), r.list()}, rm.ID, b).Err(); err != nil {
			return progress{}, err
		}
	}
	ids, err := r.client.LRange(ctx, r.list(), 0, -1).Result()
	if err != nil {
		return progress{}, err
	}
	pipe := r.client.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGet(ctx, r.reminder(id), "state")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return progress{}, err
	}
	var p progress
	for i, c := range cmds {
		if errors.Is(c.Err(), redis.Nil) {
			continue // deleted by hand: forgotten
		}
		rs, err := decodeProgress(ids[i], c.Val())
		if err != nil {
			return progress{}, err
		}
		p.Reminders = append(p.Reminders, rs)
	}
	return p, nil
}

func (r *redisProgress) claim(ctx context.Context, id string, fence uint64) (*reminderState, error) {
	res, err := claimProgress.Run(ctx, r.client, []string{r.reminder(id)}, strconv.FormatUint(fence, 10)).Slice()
	if err != nil {
		return nil, err
	}
	switch res[0] {
	case int64(0):
		return nil, errTakenOver
	case int64(2):
		return nil, fmt.Errorf("reminder %s is not in Redis", id)
	}
	s, _ := res[1].(string)
	return decodeProgress(id, s)
}

func decodeProgress(id, s string) (*reminderState, error) {
	var rs reminderState
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		return nil, fmt.Errorf("progress of reminder %s in Redis: %w", id, err)
	}
	return &rs, nil
}

// write stores each record with one script call.
func (r *redisProgress) write(ctx context.Context, recs []record) ([]int, error) {
	var refused []int
	for _, rec := range recs {
		ok, err := writeProgress.Run(ctx, r.client, []string{r.reminder(rec.ID)}, rec.Data, strconv.FormatUint(rec.Fence, 10)).Int()
		if err != nil {
			return refused, err
		}
		if ok == 0 {
			refused = append(refused, rec.I)
		}
	}
	return refused, nil
}

// close does nothing: the connection outlives the run.
func (r *redisProgress) close() error { return nil }
