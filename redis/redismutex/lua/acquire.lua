--[[
  acquire.lua takes a lock if it is free, and gives its holder the next
  fence of the lock's Name.

  A lock is a STRING holding its holder's token, with "*" appended once
  someone waits for it: the release of a lock so marked publishes its
  key, to wake who waits (see release.lua). The fence is one counter per
  Name, shared by its keys, that never expires, so that fences only grow.

  KEYS[1] the lock, P.."k:"..key, where P is "{Prefix:lock:Name}:"
  KEYS[2] the Name's fence counter, P.."fence"
  ARGV[1] token of the new holder
  ARGV[2] TTL in milliseconds
  ARGV[3] present when the caller will wait: mark the lock if it is held
  Returns the fence, 1 or more, if the lock was free and is now held;
  else minus the lock's remaining time in milliseconds (at least 1), or 0
  if the lock never expires.
]]
-- SET NX GET (Redis 7.0) answers the holder of a lock that is held, so
-- that marking it takes no GET.
local holder = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'GET')
if not holder then
  return redis.call('INCR', KEYS[2])
end
if ARGV[3] and string.byte(holder, -1) ~= 42 then -- 42 is "*"
  redis.call('APPEND', KEYS[1], '*')
end
local left = redis.call('PTTL', KEYS[1])
if left > 0 then
  return -left
end
if left == 0 then
  return -1
end
return 0
