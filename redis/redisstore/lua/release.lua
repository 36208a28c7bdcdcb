--[[
  release.lua puts a held key back in the ready order, at the tail, with
  its attempts started over and its error cleared: its next lease takes the held values and, up
  to the lease's MaxBatch, the ready values behind them.

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names
  ARGV[2]     key
  Returns FOLDING if Adds are left to fold; otherwise 1 if the key was
  held, 0 if not.
]]
-- @include lib.lua
local now, now_s = clock()
if not fold() then
  return FOLDING
end
local key, kk = ARGV[2], KEYS[1]
local h = rcall('HMGET', kk, 's', 'b', 'bd', 'e', 'g')
if h[1] == 'm' then
  return m_release(key, kk, now, now_s)
end
if h[1] ~= 'h' then
  return 0
end
rcall('ZREM', K_HELD, key)
settle(key, kk, rcall('LLEN', PFX .. 'v:' .. key), now, now_s, h[2], h[3], h[4], h[5])
return 1
