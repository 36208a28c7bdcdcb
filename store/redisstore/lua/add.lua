--[[
  add.lua appends values to a key: ready at once with a Wait of 0,
  otherwise in the key's open burst. The common case, values ready at once
  for a key with no open burst, takes the first lines; lib.lua comes after
  them, for the others.

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  KEYS[2]     the key's LIST, ARGV[1].."v:"..key
  KEYS[3]     the queue's ready, KEYS[4] its meta, KEYS[5] its wake (see
              lib.lua): the keys of the common case; the others, which lib.lua
              names from ARGV[1], are in the same hash slot
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  ARGV[3]     Wait in microseconds, -1 for ever
  ARGV[4]     MaxWait in microseconds, 0 for no bound
  ARGV[5..]   the values
  Returns 1.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local at = string.format('%d:', now)
local n = #ARGV - 4
local len
if n == 1 then
  len = redis.call('RPUSH', KEYS[2], at .. ARGV[5])
else
  local vals = {}
  for i = 5, #ARGV do
    vals[i - 4] = at .. ARGV[i]
  end
  len = redis.call('RPUSH', KEYS[2], unpack(vals))
end
redis.call('HINCRBY', KEYS[4], 'v', n)
local h
if ARGV[3] == '0' then
  if len == n then
    -- A new key, ready; its state needs no hash.
    redis.call('ZADD', KEYS[3], now, ARGV[2])
    redis.call('ZADD', KEYS[5], 0, 'w')
    return 1
  end
  h = redis.call('HMGET', KEYS[1], 's', 'b', 'bf', 'bd')
  if not h[2] then
    -- No open burst to end: the values wait behind the others.
    return 1
  end
end
-- @include lib.lua
local wait, maxwait = tonumber(ARGV[3]), tonumber(ARGV[4])
if len == n then
  -- A new key with a burst.
  local due = burst_due(now, now, wait, maxwait)
  rcall('HSET', KEYS[1], 's', 'p', 'b', n, 'bf', now, 'bd', due)
  wake_before(due)
  rcall('ZADD', K_PENDING, due, ARGV[2])
  return 1
end
place(ARGV[2], KEYS[1], n, now, wait, maxwait, h or rcall('HMGET', KEYS[1], 's', 'b', 'bf', 'bd'))
return 1
