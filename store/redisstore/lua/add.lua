--[[
  add.lua appends an Add to the queue's inbox, with the server's time, for
  the next script that looks at the queue to fold into its key (see
  lib.lua). An Add into an empty inbox wakes a waiting worker, whose Claim
  folds it; the Adds behind it are folded with it.

  KEYS[1]     the queue's inbox
  KEYS[2]     the queue's wake
  ARGV[1]     params: "<count>" with a Wait of 0, else "<count> <wait>
              <maxwait>": the count of values, Wait in microseconds (-1
              for ever) and MaxWait in microseconds (0 for no bound)
  ARGV[2]     key
  ARGV[3..]   the values
  Returns 1.
]]
local t = redis.call('TIME')
local len
if #ARGV <= 4000 then
  len = redis.call('RPUSH', KEYS[1], t[1], t[2], unpack(ARGV))
else
  -- In slices that unpack can take; the script makes them one step.
  len = redis.call('RPUSH', KEYS[1], t[1], t[2], unpack(ARGV, 1, 4000))
  for i = 4001, #ARGV, 4000 do
    len = redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 3999, #ARGV)))
  end
end
if len == #ARGV + 2 then
  redis.call('ZADD', KEYS[2], '0', 'w')
end
return 1
