package main

// PLACEHOLDER until ratelimit/redisrate is available: a shared GCRA bucket
// with a pause key, just enough to develop against. Replaced by
// redisrate.New.

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

var sharedScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local pause = tonumber(ARGV[3])
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if pause > 0 then
  if now + pause > paused then
    redis.call('SET', KEYS[2], now + pause, 'PX', math.ceil(pause / 1000) + 1)
  end
  return 0
end
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat < paused then tat = paused end
local at = tat - tolerance
if at < paused then at = paused end
if at < now then at = now end
redis.call('SET', KEYS[1], tat + interval, 'PX', math.ceil((tat + interval - now) / 1000) + 1000)
return at - now
`)

type sharedBucket struct {
	rdb                 *redis.Client
	keys                []string
	interval, tolerance int64
}

func newSharedBucket(rdb *redis.Client, prefix string, rate float64, burst int) (apiLimiter, error) {
	iv := int64(1e6 / rate)
	k := "{" + prefix + ":rate:" + apiBucketName + "}"
	return &sharedBucket{rdb: rdb, keys: []string{k + ":tat", k + ":pause"}, interval: iv, tolerance: int64(max(burst, 1)-1) * iv}, nil
}

func (b *sharedBucket) Wait(ctx context.Context) error {
	us, err := sharedScript.Run(ctx, b.rdb, b.keys, b.interval, b.tolerance, 0).Int64()
	if err != nil {
		return err
	}
	select {
	case <-time.After(time.Duration(us) * time.Microsecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *sharedBucket) PauseFor(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	sharedScript.Run(ctx, b.rdb, b.keys, b.interval, b.tolerance, d.Microseconds())
}
