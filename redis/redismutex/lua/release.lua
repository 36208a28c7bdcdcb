--[[
  release.lua deletes a lock that its holder still holds and, if someone
  waits for it (see acquire.lua), publishes its key on the channel
  P.."released", where P is "{Prefix:lock:Name}:".

  KEYS[1] the lock, P.."k:"..key
  ARGV[1] token of the holder
  Returns 1, or 0 if the lock was no longer the holder's.
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
if holder == ARGV[1] .. '*' then
  redis.call('DEL', KEYS[1])
  -- P ends at the first "}:", as Prefix and Name have no brace.
  local at = string.find(KEYS[1], '}:k:', 1, true)
  redis.call('PUBLISH', string.sub(KEYS[1], 1, at + 1) .. 'released', string.sub(KEYS[1], at + 4))
  return 1
end
return 0
