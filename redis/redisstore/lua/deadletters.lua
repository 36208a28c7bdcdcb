--[[
  deadletters.lua lists dead letters, oldest first.

  KEYS[1]     the queue's dead (see lib.lua); the dead letters' own names
              are built from ARGV[1], in the same hash slot
  ARGV[1]     prefix of the queue's names
  ARGV[2]     list those whose id is above this one
  ARGV[3]     most dead letters to list
  Returns {id, {key, error, attempt, time, value...}, id, ...}, each value
  as stored ("<time added>:<value>").
]]
-- @include lib.lua
local ids = rcall('ZRANGEBYSCORE', K_DEAD, '(' .. ARGV[2], '+inf', 'LIMIT', '0', ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = rcall('LRANGE', PFX .. 'd:' .. id, 0, -1)
end
return out
