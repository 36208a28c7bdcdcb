--[[
  extend.lua renews a lease that still holds.

  KEYS[1..10] the queue's keys (see lib.lua)
  KEYS[11]    the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  ARGV[3]     fence of the lease
  ARGV[4]     TTL in microseconds from now, -1 for ever
  Returns 1, or 0 if the lease lapsed or was superseded.
]]
-- @include lib.lua
local now = now_us()
if not leased_by(KEYS[11], ARGV[2], ARGV[3], now) then
  return 0
end
rcall('ZADD', K_LEASED, 'XX', deadline(now, tonumber(ARGV[4])), ARGV[2])
return 1
