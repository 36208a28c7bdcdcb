-- Stores a reminder's progress, unless a holder of the account's lock with
-- a higher fence has stored it already: that one took the reminder over
-- from the caller, whose lock was lost.
--
-- KEYS[1]  the reminder's hash: state (its progress as JSON), fence
-- ARGV[1]  the progress as JSON
-- ARGV[2]  the fence of the caller's account lock
--
-- Returns 1 if it stored the progress, 0 if it refused it.
local stored = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if stored > tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'fence', ARGV[2])
return 1
