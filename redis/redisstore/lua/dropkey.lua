--[[
  dropkey.lua moves all the values of a key, those of its lease and of
  its open burst included, to one dead letter, in their order, after
  folding the inbox, and removes the key's state: a lease that is out is
  ended, as its fence check finds no lease. A pause of the key stays.

  KEYS[1]     the key's HASH, ARGV[1].."k:"..key
  ARGV[1]     prefix of the queue's names; a dead letter is ARGV[1].."d:"..id
  ARGV[2]     key
  ARGV[3]     the dead letter's error
  Returns FOLDING if Adds are left to fold; otherwise how many values it
  moved (0, and no dead letter, for a key without values).
]]
-- @include lib.lua
local now, now_s = clock()
if not fold() then
  return FOLDING
end
local key, kk = ARGV[2], KEYS[1]
local vk = PFX .. 'v:' .. key
local vals = rcall('LRANGE', vk, '0', '-1')
if #vals == 0 then
  return 0
end
local id = rcall('HINCRBY', K_META, 'd', '1')
local dk = PFX .. 'd:' .. id
local h = rcall('HMGET', kk, 's', 'a', 'T')
local attempt = h[2] or '0'
if h[1] == 'm' then
  attempt = str(select(7, m_state(key, now, now_s)))
end
rcall('RPUSH', dk, key, ARGV[3], attempt, now_s)
push(dk, vals)
rcall('ZADD', K_DEAD, id, id)
rcall('ZADD', K_DEADAT, now_s, id)
rcall('HINCRBY', K_META, 'v', str(-#vals))
for _, k in ipairs({ready_set(kk), K_PENDING, K_TRAILING, K_DELAYED, K_LEASED, K_HELD, K_PARKED, K_KEYS}) do
  rcall('ZREM', k, key)
end
rcall('SREM', K_MULTI, key)
-- Its bucket stays, in rates.
spill(key, h[3])
flush_adds()
rcall('DEL', kk, vk)
return #vals
