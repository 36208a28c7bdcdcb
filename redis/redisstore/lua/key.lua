--[[
  key.lua reads what one key is doing, after folding the inbox.

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  Returns FOLDING if Adds are left to fold; otherwise {key, state, since,
  until, maxwait, attempt, fence, holder, error, values, oldest} as
  keys.lua does, or false if the key has no values.
]]
-- @include lib.lua
local now = clock()
if not fold() then
  return FOLDING
end
return key_info(ARGV[2], now, 0) or false
