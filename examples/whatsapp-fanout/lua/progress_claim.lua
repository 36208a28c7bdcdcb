-- Hands a reminder's progress to a new holder of the account's lock and
-- raises the reminder's fence to that holder's, so that from now on Redis
-- refuses the writes of earlier holders.
--
-- KEYS[1]  the reminder's hash: state (its progress as JSON), fence
-- ARGV[1]  the fence of the caller's account lock
--
-- Returns {1, progress as JSON}; {0} if a holder with a higher fence has
-- claimed the reminder already; {2} if the reminder is not stored.
local stored = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if stored > tonumber(ARGV[1]) then
  return {0}
end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  return {2}
end
redis.call('HSET', KEYS[1], 'fence', ARGV[1])
return {1, state}
