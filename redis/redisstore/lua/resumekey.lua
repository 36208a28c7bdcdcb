--[[
  resumekey.lua ends the pause of a key: a key set aside in parked, or
  that came ready and is not set aside yet (its burst, delayed batch or
  lapse came due), goes to the tail of the ready order, and a waiting
  worker wakes.

  KEYS[1]     the queue's pausedkeys (see lib.lua)
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  Returns 1 if the key was paused, 0 if not.
]]
-- @include lib.lua

-- due_now moves key into the ready order's hash state if its burst, its
-- delayed batch or its lease's lapse came due by now, as promote would,
-- and returns when it came due; nil if it did not.
local function due_now(key, now)
  local kk = PFX .. 'k:' .. key
  local s = rcall('HGET', kk, 's')
  local set = ({p = K_PENDING, t = K_DELAYED, d = K_DELAYED, w = K_DELAYED, l = K_LEASED})[s]
  if not set then
    return nil
  end
  local due = rcall('ZSCORE', set, key)
  if not due or tonumber(due) > now then
    return nil
  end
  rcall('ZREM', set, key)
  if s == 'p' then
    rcall('HDEL', kk, 'b', 'bf', 'bd', 'm')
  end
  rcall('HSET', kk, 's', 'r')
  return due
end
local now = clock()
local key = ARGV[2]
if rcall('SREM', KEYS[1], key) == 0 then
  return 0
end
local kk = PFX .. 'k:' .. key
local since = rcall('ZSCORE', K_PARKED, key)
if since then
  rcall('ZREM', K_PARKED, key)
else
  since = rcall('ZSCORE', ready_set(kk), key) or due_now(key, now)
end
if since then
  -- Behind the keys ready now; a finish stamps its keys a microsecond or
  -- so ahead, and no key goes before its own time.
  enter(key, kk, str(math.max(now, tonumber(since))))
end
wake()
return 1
