--[[
  release.lua gives back an event that take.lua reserved for later, if it
  safely can: if no other event was taken since (tat is still what take.lua
  wrote) and no pause is in effect. It then moves tat back by one interval.

  KEYS[1]  tat    STRING  see take.lua
  KEYS[2]  pause  STRING  see take.lua
  ARGV[1]  the tat that take.lua returned
  ARGV[2]  interval between two events
  Times and durations are whole microseconds of the server's clock (TIME);
  bucket.lua writes the keys.
  Returns 1 if the event was given back, 0 if not.
]]
local v = redis.call('MGET', KEYS[1], KEYS[2])
if v[1] ~= ARGV[1] then
  return 0
end
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
if (tonumber(v[2]) or 0) > now then
  return 0
end
local tat = ARGV[1] - ARGV[2]
if tat <= now then
  redis.call('DEL', KEYS[1])
else
  write(KEYS[1], tat, tonumber(v[1]))
end
return 1
