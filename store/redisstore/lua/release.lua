--[[
  release.lua puts a held key back in the ready order, at the tail, with
  its attempts started over: its next lease takes the held values and, up
  to the lease's MaxBatch, the ready values behind them.

  KEYS[1..10] the queue's keys (see lib.lua)
  KEYS[11]    the key's HASH, ARGV[1].."k:"..key
  KEYS[12]    the key's LIST, ARGV[1].."v:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  Returns 1 if the key was held, 0 if not.
]]
-- @include lib.lua
local key, kk, vk = ARGV[2], KEYS[11], KEYS[12]
if rcall('HGET', kk, 's') ~= 'h' then
  return 0
end
local now = now_us()
rcall('ZREM', K_HELD, key)
rcall('HDEL', kk, 'a', 'n')
settle(key, kk, rcall('LLEN', vk), now)
return 1
