--[[
  key.lua reads what one key is doing, after folding the inbox.

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  ARGV[3]     the most keys ahead to count (store.MaxAhead)
  Returns FOLDING if Adds are left to fold; otherwise {key, state, since,
  until, maxwait, attempt, fence, holder, error, values, oldest, ahead,
  paused, leases, tenants ahead, for token} as keys.lua does, but with ahead and
  tenants ahead (see lib_inspect.lua); for a
  paused key without values, state 0 and paused 1; false for a key that
  has no values and is not paused.
]]
-- @include lib.lua
local now = clock()
if not fold() then
  return FOLDING
end
local info = key_info(ARGV[2], now, 0, tonumber(ARGV[3]))
if info then
  return info
end
if rcall('SISMEMBER', K_PAUSEDKEYS, ARGV[2]) == 1 then
  return {ARGV[2], 0, '', '', 0, 0, 0, '', '', 0, '', 0, 1, 0, 0, 0}
end
return false
