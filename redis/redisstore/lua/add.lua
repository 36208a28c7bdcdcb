--[[
  add.lua appends an Add to the queue's inbox, with the server's time, for
  the next script that looks at the queue to fold into its key (see
  lib.lua), and counts its values in the queue's meta: the count covers
  the values of the inbox too, so that a bound is checked against every
  value stored. An Add into an empty inbox wakes a waiting worker, whose
  Claim folds it; the Adds behind it are folded with it.

  KEYS[1]     the queue's inbox
  KEYS[2]     the queue's wake
  KEYS[3]     the queue's meta
  ARGV[1]     the most values the queue may then store; 0 for no bound
  ARGV[2]     params: "<count>" with a Wait of 0, no Delay and no
              tenant, "<count> @<delay>" with a Delay, else "<count>
              <wait> <maxwait>": the count of values, Delay and Wait in
              microseconds (-1 for ever) and MaxWait in microseconds (0
              for no bound); then " <weight> <tenant>" with a tenant
  ARGV[3]     key
  ARGV[4..]   the values
  Returns 1, or 0 if the bound refused the Add, which then changed nothing.
]]
local n = #ARGV - 3
local bound = tonumber(ARGV[1])
if bound > 0 and (tonumber(redis.call('HGET', KEYS[3], 'v')) or 0) + n > bound then
  return 0
end
redis.call('HINCRBY', KEYS[3], 'v', tostring(n))
local t = redis.call('TIME')
local len
if #ARGV <= 4001 then
  len = redis.call('RPUSH', KEYS[1], t[1], t[2], unpack(ARGV, 2))
else
  -- In slices that unpack can take; the script makes them one step.
  len = redis.call('RPUSH', KEYS[1], t[1], t[2], unpack(ARGV, 2, 4001))
  for i = 4002, #ARGV, 4000 do
    len = redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 3999, #ARGV)))
  end
end
if len == #ARGV + 1 then
  redis.call('ZADD', KEYS[2], '0', 'w')
end
return 1
