--[[
  purge.lua removes up to ARGV[3] of the dead letters dropped before a time.

  KEYS[1]     the queue's dead (see lib.lua); the dead letters' own names
              are built from ARGV[1], in the same hash slot
  ARGV[1]     prefix of the queue's names
  ARGV[2]     the time, in microseconds
  ARGV[3]     most dead letters to remove
  Returns how many it removed.
]]
-- @include lib.lua
local ids = rcall('ZRANGEBYSCORE', K_DEADAT, '-inf', '(' .. ARGV[2], 'LIMIT', '0', ARGV[3])
for _, id in ipairs(ids) do
  rcall('DEL', PFX .. 'd:' .. id)
  rcall('ZREM', K_DEAD, id)
  rcall('ZREM', K_DEADAT, id)
end
return #ids
