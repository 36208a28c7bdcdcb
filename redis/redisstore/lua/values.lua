--[[
  values.lua reads the first values of a key, after folding the inbox.

  KEYS[1]     the key's LIST of values, ARGV[1].."v:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     most values to read, at least 1
  Returns FOLDING if Adds are left to fold; otherwise the values from the
  head, as stored ("<time added>:<value>").
]]
-- @include lib.lua
if not fold() then
  return FOLDING
end
return rcall('LRANGE', KEYS[1], '0', str(tonumber(ARGV[2]) - 1))
