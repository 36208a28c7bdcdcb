-- Stores a reminder's first progress, unless the reminder is known.
--
-- KEYS[1]  the reminder's hash: state (its progress as JSON), fence
-- KEYS[2]  the list of every reminder's id, in the order they were added
-- ARGV[1]  the reminder's id
-- ARGV[2]  its progress as JSON, every group pending
--
-- Returns 1 if it added the reminder, 0 if the reminder was known.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'fence', '0')
redis.call('RPUSH', KEYS[2], ARGV[1])
return 1
