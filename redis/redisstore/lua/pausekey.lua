--[[
  pausekey.lua pauses a key, with values or not: it joins the queue's
  pausedkeys, and if it is in the ready order it is set aside in parked
  now; if it comes ready later, the Claim that pops it sets it aside (see
  lib.lua). Its bursts, delays and lease go on as they are.

  KEYS[1]     the queue's pausedkeys (see lib.lua)
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  Returns 1 if the key was not paused, 0 if it was.
]]
-- @include lib.lua
local key = ARGV[2]
if rcall('SADD', KEYS[1], key) == 0 then
  return 0
end
feature_on()
local set = ready_set(PFX .. 'k:' .. key)
local since = rcall('ZSCORE', set, key)
if since then
  rcall('ZREM', set, key)
  park(key, since)
end
return 1
