--[[
  pause.lua pauses a bucket for ARGV[1] from now, unless it is already
  paused until then or later: a pause is only ever extended. A pause that
  is set or extended also empties the bucket, which then refills from now.

  KEYS[1]  tat    STRING  see take.lua
  KEYS[2]  pause  STRING  see take.lua
  ARGV[1]  how long to pause, > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  Times and durations are whole microseconds of the server's clock (TIME);
  a key expires at its time, rounded up to the millisecond (PXAT).
  Returns 1 if the pause was set or extended, 0 if not.
]]
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local till = now + ARGV[1]
if (tonumber(redis.call('GET', KEYS[2])) or 0) >= till then
  return 0
end
write(KEYS[2], till)
local full = now + ARGV[2]
if (tonumber(redis.call('GET', KEYS[1])) or 0) < full then
  write(KEYS[1], full)
end
return 1
