--[[
  extend.lua renews a lease that still holds. It need not fold the inbox:
  an Add changes neither a lease nor its lapse.

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  ARGV[3]     fence of the lease
  ARGV[4]     TTL in microseconds from now, -1 for ever
  Returns 1, or 0 if the lease lapsed or was superseded.
]]
-- @include lib.lua
local now, now_s = clock()
local h = leased_by(ARGV[2], KEYS[1], ARGV[3], now)
if not h then
  return 0
end
if h == 'm' then
  return m_extend(ARGV[2], KEYS[1], ARGV[3], tonumber(ARGV[4]), now, now_s)
end
local exp = str(deadline(now, tonumber(ARGV[4])))
rcall('HSET', KEYS[1], 'x', exp)
rcall('ZADD', K_LEASED, 'XX', exp, ARGV[2])
return 1
