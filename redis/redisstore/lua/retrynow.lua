--[[
  retrynow.lua makes a retrying or deferred key, whose delay has not
  passed, ready now, at the tail of the ready order, with its batch, its
  attempts and its error as they are; a paused one is set aside in parked
  instead (see lib.lua).

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  Returns 1 if the key was retrying or deferred, 0 if not (it is left as
  it is).
]]
-- @include lib.lua
local now, now_s = clock()
local key, kk = ARGV[2], KEYS[1]
local s = rcall('HGET', kk, 's')
if s == 'm' then
  return m_retry_now(key, kk, now, now_s)
end
if s ~= 't' and s ~= 'd' then
  return 0
end
local due = rcall('ZSCORE', K_DELAYED, key)
if not due or tonumber(due) <= now then
  -- Ready already, since its delay passed.
  return 0
end
rcall('ZREM', K_DELAYED, key)
rcall('HSET', kk, 's', 'r')
if rcall('SISMEMBER', K_PAUSEDKEYS, key) == 1 then
  park(key, now_s)
  return 1
end
enter(key, kk, now_s)
wake()
return 1
