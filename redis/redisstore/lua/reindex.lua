--[[
  reindex.lua makes the queue's keys (see lib.lua) list every key with
  values, and those only, one bounded step per call: a queue whose keys
  were added, or emptied, by a version of the library that did not keep
  keys. Steps 1 to 6 scan the state sets (ready, pending, delayed, leased,
  held, parked) with ZSCAN and add to keys those of their members that have
  values; step 7 walks keys by its members' bytes and removes those that
  have none. A key that has values all along is in a state set all along,
  and so in keys once the steps are done, unless it moved from a set not
  scanned yet to one scanned already; keys.lua checks the count again on
  its next call. Each step reads about REINDEX members.

  KEYS[1]     the queue's keys
  ARGV[1]     prefix of the queue's names
  ARGV[2]     the step, 1 to 7
  ARGV[3]     where it goes on: ZSCAN's cursor ("0" to start) for steps 1
              to 6, for step 7 "-" or "(" and the last key walked
  Returns {step, cursor} of the next call: step 0 once done.
]]
-- @include lib.lua
local REINDEX = 500
local step, cursor = tonumber(ARGV[2]), ARGV[3]
if step <= 6 then
  local set = ({K_READY, K_PENDING, K_DELAYED, K_LEASED, K_HELD, K_PARKED})[step]
  local r = rcall('ZSCAN', set, cursor, 'COUNT', str(REINDEX))
  local add = {}
  for i = 1, #r[2], 2 do
    local key = r[2][i]
    if rcall('EXISTS', PFX .. 'v:' .. key) == 1 then
      add[#add + 1] = '0'
      add[#add + 1] = key
    end
  end
  if #add > 0 then
    rcall('ZADD', K_KEYS, unpack(add))
  end
  if r[1] ~= '0' then
    return {step, r[1]}
  end
  if step < 6 then
    return {step + 1, '0'}
  end
  return {7, '-'}
end
local r = rcall('ZRANGE', K_KEYS, cursor, '+', 'BYLEX', 'LIMIT', '0', str(REINDEX))
for _, key in ipairs(r) do
  if rcall('EXISTS', PFX .. 'v:' .. key) == 0 then
    rcall('ZREM', K_KEYS, key)
  end
end
if #r < REINDEX then
  return {0, ''}
end
return {7, '(' .. r[#r]}
