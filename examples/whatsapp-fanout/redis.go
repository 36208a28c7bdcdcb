package main

import (
	"cmp"
	"context"
	_ "embed"
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

// openShared sets in cfg what the instances given the same Redis url and
// prefix share: per account a lock (redismutex, leased for lockTTL) and a
// bucket (redisrate), and the progress. close releases them.
func openShared(ctx context.Context, cfg *config, url, prefix string, lockTTL time.Duration) (close func() error, err error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	client := redis.NewClient(opt)
	locker, err := redismutex.New(ctx, client, redismutex.Config{TTL: lockTTL, Prefix: prefix, Name: redisName}) // checks the server
	if err != nil {
		return nil, errors.Join(fmt.Errorf("-redis %s: %w", url, err), client.Close())
	}
	limits, err := redisrate.NewKeyed(ctx, client, redisrate.KeyedConfig{Rate: cfg.Rate / 60, Burst: cfg.Burst, Name: redisName, Prefix: prefix})
	if err != nil {
		return nil, errors.Join(err, locker.Close(), client.Close())
	}
	cfg.Locks, cfg.Limits = locker, limits
	cfg.Progress = newRedisProgress(client, cmp.Or(prefix, redismutex.DefaultPrefix))
	return func() error { return errors.Join(locker.Close(), client.Close()) }, nil
}

var (
	//go:embed lua/progress_add.lua
	addLua string
	//go:embed lua/progress_claim.lua
	claimLua string
	//go:embed lua/progress_write.lua
	writeLua string

	addProgress, claimProgress, writeProgress = redis.NewScript(addLua), redis.NewScript(claimLua), redis.NewScript(writeLua)
)

// redisProgress keeps every reminder's progress in Redis (README.md): a
// hash per reminder, with the progress and the fence it was written under,
// and the list of their ids, in one hash slot. Redis refuses a write whose
// fence is below the reminder's, so a holder that lost its account lock
// cannot overwrite its successor's progress.
type redisProgress struct {
	client     redis.UniversalClient
	list, hash string // the key of the list of ids, and the start of a reminder's hash key
}

func newRedisProgress(client redis.UniversalClient, prefix string) *redisProgress {
	tag := "{" + prefix + ":" + redisName + "}"
	return &redisProgress{client: client, list: tag + ":reminders", hash: tag + ":reminder:"}
}

func (r *redisProgress) load(ctx context.Context, add []reminder) (p progress, err error) {
	for _, rm := range add {
		b, _ := json.Marshal(newReminderState(rm)) // strings and ints only
		if err := addProgress.Run(ctx, r.client, []string{r.hash + rm.ID, r.list}, rm.ID, b).Err(); err != nil {
			return p, err
		}
	}
	ids, err := r.client.LRange(ctx, r.list, 0, -1).Result()
	for _, id := range ids {
		s, err := r.client.HGet(ctx, r.hash+id, "state").Result()
		if errors.Is(err, redis.Nil) {
			continue // deleted by hand: forgotten
		}
		rs, err := decodeProgress(id, s, err)
		if err != nil {
			return progress{}, err
		}
		p.Reminders = append(p.Reminders, rs)
	}
	return p, err
}

func (r *redisProgress) claim(ctx context.Context, id string, fence uint64) (*reminderState, error) {
	res, err := claimProgress.Run(ctx, r.client, []string{r.hash + id}, strconv.FormatUint(fence, 10)).Slice()
	switch {
	case err != nil:
		return nil, err
	case res[0] == int64(0):
		return nil, errTakenOver
	case res[0] == int64(2):
		return nil, fmt.Errorf("reminder %s is not in Redis", id)
	}
	s, _ := res[1].(string)
	return decodeProgress(id, s, nil)
}

// decodeProgress decodes reminder id's progress s, read with error err.
func decodeProgress(id, s string, err error) (*reminderState, error) {
	var rs reminderState
	if err == nil {
		err = json.Unmarshal([]byte(s), &rs)
	}
	if err != nil {
		return nil, fmt.Errorf("progress of reminder %s in Redis: %w", id, err)
	}
	return &rs, nil
}

// write stores each record that changed with one script call.
func (r *redisProgress) write(ctx context.Context, recs []record) (refused []int, _ error) {
	for _, rec := range recs {
		if !rec.Changed {
			continue
		}
		ok, err := writeProgress.Run(ctx, r.client, []string{r.hash + rec.ID}, rec.Data, strconv.FormatUint(rec.Fence, 10)).Int()
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
