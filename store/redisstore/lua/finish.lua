--[[
  finish.lua ends a lease that still holds, as its outcome says.

  KEYS[1..10] the queue's keys (see lib.lua)
  KEYS[11]    the key's HASH, ARGV[1].."k:"..key
  KEYS[12]    the key's LIST, ARGV[1].."v:"..key
  ARGV[1]     prefix of the queue's names; a dead letter is ARGV[1].."d:"..id
  ARGV[2]     key
  ARGV[3]     fence of the lease
  ARGV[4]     outcome: 1 ack, 2 drop, 3 retry, 4 defer, 5 hold
  ARGV[5]     delay of a retry or defer in microseconds, -1 for ever
  ARGV[6]     error of a drop
  Returns 1 if the key still has values, 0 if not, -1 if the lease lapsed,
  ended or was superseded (and nothing changed).
]]
-- @include lib.lua
local key, kk, vk = ARGV[2], KEYS[11], KEYS[12]
local kind = tonumber(ARGV[4])
local now = now_us()
local h = leased_by(kk, key, ARGV[3], now, 'n', 'a')
if not h then
  return -1
end
local n = tonumber(h[3])
rcall('ZREM', K_LEASED, key)

if kind == 1 or kind == 2 then
  if kind == 2 then
    local id = rcall('HINCRBY', K_META, 'd', 1)
    local dk = PFX .. 'd:' .. id
    rcall('RPUSH', dk, key, ARGV[6], h[4], string.format('%d', now))
    rcall('RPUSH', dk, unpack(rcall('LRANGE', vk, 0, n - 1)))
    rcall('ZADD', K_DEAD, id, id)
    rcall('ZADD', K_DEADAT, now, id)
  end
  rcall('LTRIM', vk, n, -1)
  rcall('HINCRBY', K_META, 'v', -n)
  local left = rcall('LLEN', vk)
  if left == 0 then
    rcall('DEL', kk)
    return 0
  end
  -- The next batch starts at attempt 1.
  rcall('HDEL', kk, 'n', 'a')
  settle(key, kk, left, now)
  return 1
end

if kind == 5 then
  rcall('HSET', kk, 's', 'h')
  rcall('ZADD', K_HELD, now, key)
  return 1
end

-- Retry or defer: the same batch, due after the delay; a defer does not
-- count as an attempt.
if kind == 4 then
  rcall('HSET', kk, 'a', tonumber(h[4]) - 1)
end
local due = deadline(now, tonumber(ARGV[5]))
if due <= now then
  make_ready(key, kk, now)
  wake()
  return 1
end
if kind == 3 then
  rcall('HSET', kk, 's', 't')
else
  rcall('HSET', kk, 's', 'd')
end
wake_before(due)
rcall('ZADD', K_DELAYED, due, key)
return 1
