--[[
  renew.lua extends a lock that its holder still holds.

  KEYS[1] the lock, "{Prefix:lock:Name}:k:"..key (see acquire.lua)
  ARGV[1] token of the holder
  ARGV[2] TTL in milliseconds, from now
  Returns 1, or 0 if the lock is no longer the holder's.
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or holder == ARGV[1] .. '*' then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
