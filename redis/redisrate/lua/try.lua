--[[
  try.lua takes one event from a bucket (GCRA) if it conforms now, and
  otherwise says how long until it would, taking nothing: what a caller
  that never waits needs (ratelimit.KeyGate).

  KEYS[1]  tat    STRING  as in take.lua
  KEYS[2]  pause  STRING  as in take.lua
  ARGV[1]  interval between two events (1/Rate), > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  ARGV[3]  '1' to take the event if it conforms now, '0' to only look
  Times and durations are whole microseconds of the server's clock.

  Returns 0 if the event may happen now (taken if ARGV[3] is '1'), or
  the delay until it conforms, > 0, with nothing taken.
]]
local now, tat, pause, old = read(KEYS[1], KEYS[2])
local at = conforms(now, tat, pause, ARGV[1], ARGV[2])
if at > now then
  return at - now
end
if ARGV[3] == '1' then
  write(KEYS[1], tat + ARGV[1], old)
end
return 0
