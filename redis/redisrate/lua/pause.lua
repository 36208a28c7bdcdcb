--[[
  pause.lua pauses a bucket for ARGV[1] from now, unless it is already
  paused until then or later: a pause is only ever extended. A pause that
  is set or extended also empties the bucket, which then refills from now.

  KEYS[1]  tat    STRING  see take.lua
  KEYS[2]  pause  STRING  see take.lua
  ARGV[1]  how long to pause, > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  Times and durations are whole microseconds of the server's clock (TIME);
  bucket.lua writes the keys.
  Returns 1 if the pause was set or extended, 0 if not.
]]
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local till = now + ARGV[1]
local v = redis.call('MGET', KEYS[1], KEYS[2])
local old = tonumber(v[2])
if old and old >= till then
  return 0
end
write(KEYS[2], till, old)
local full = now + ARGV[2]
old = tonumber(v[1])
if not old or old < full then
  write(KEYS[1], full, old)
end
return 1
