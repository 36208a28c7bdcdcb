--[[
  add.lua appends values to a key: ready at once with a Wait of 0,
  otherwise in the key's open burst.

  KEYS[1..10] the queue's keys (see lib.lua)
  KEYS[11]    the key's HASH, ARGV[1].."k:"..key
  KEYS[12]    the key's LIST, ARGV[1].."v:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  ARGV[3]     Wait in microseconds, -1 for ever
  ARGV[4]     MaxWait in microseconds, 0 for no bound
  ARGV[5..]   the values
  Returns 1.
]]
local now = now_us()
append(ARGV[2], KEYS[11], KEYS[12], stamp(now, 5), now, tonumber(ARGV[3]), tonumber(ARGV[4]))
return 1
