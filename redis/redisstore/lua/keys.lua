--[[
  keys.lua reads a page of the queue's keys, in the order of their bytes,
  after folding the inbox: it walks keys (see lib.lua) from a bound, reads
  at most ARGV[5] of its members, and keeps those whose state ARGV[6]
  selects, up to ARGV[4] of them. It removes from keys the members it
  finds without values (see reindex.lua).

  KEYS[1]     the queue's keys (see lib.lua)
  ARGV[1]     prefix of the queue's names
  ARGV[2]     where the page starts, as ZRANGE BYLEX takes it: "-", or "["
              or "(" and a key
  ARGV[3]     where the keys end: "+", or "(" and a key
  ARGV[4]     most keys in the page
  ARGV[5]     most members of keys to read, at least ARGV[4]
  ARGV[6]     the state to keep (see lib_inspect.lua), 0 for any
  ARGV[7]     1 to check first that keys counts every key of the queue
  Returns FOLDING if Adds are left to fold; INDEXING if ARGV[7] is 1 and
  keys misses keys or holds keys without values (see reindex.lua);
  otherwise {next, {key, state, since, until, maxwait, attempt, fence,
  holder, error, values, oldest, ahead, paused, leases, tenants ahead,
  for token},
  ...} (ahead and tenants ahead 0, see lib_inspect.lua): next is the last key read if more may follow, else
  false.
]]
-- @include lib.lua
local now = clock()
if not fold() then
  return FOLDING
end
if ARGV[7] == '1' and not indexed() then
  return {ok = 'INDEXING'}
end
local want, most, state = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local r = rcall('ZRANGE', K_KEYS, ARGV[2], ARGV[3], 'BYLEX', 'LIMIT', '0', str(most + 1))
local out, got, last = {false}, 0, 0
for i = 1, math.min(#r, most) do
  last = i
  local info, gone = key_info(r[i], now, state, 0)
  if gone then
    -- Emptied by a version that did not keep keys: the count of keys may
    -- agree with the state sets' again only while this one is left.
    rcall('ZREM', K_KEYS, r[i])
  elseif info then
    out[#out + 1] = info
    got = got + 1
    if got == want then
      break
    end
  end
end
if last < #r then
  out[1] = r[last]
end
return out
