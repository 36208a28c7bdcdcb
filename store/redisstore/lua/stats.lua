--[[
  stats.lua counts the queue at one instant, after moving the keys that
  came due into the ready order and closing the bursts that came due. It
  visits the held and the delayed keys.

  KEYS[1..10] the queue's keys (see lib.lua); the names of the held and
              delayed keys are built from ARGV[1], in the same hash slot
  ARGV[1]     prefix of the queue's names
  Returns {values, keys, ready, pending, leased, retrying, behind, held,
  held values, dead}.
]]
-- @include lib.lua
local now = now_us()
local due = 0
for _, k in ipairs({K_LEASED, K_DELAYED, K_PENDING, K_TRAILING}) do
  due = math.max(due, rcall('ZCOUNT', k, '-inf', now))
end
promote(now, due)

local retrying, behind = 0, 0
for _, key in ipairs(rcall('ZRANGE', K_DELAYED, 0, -1)) do
  local h = rcall('HMGET', PFX .. 'k:' .. key, 's', 'n')
  if h[1] == 't' then
    retrying = retrying + 1
    behind = behind + rcall('LLEN', PFX .. 'v:' .. key) - tonumber(h[2])
  end
end
local held, heldvalues = rcall('ZRANGE', K_HELD, 0, -1), 0
for _, key in ipairs(held) do
  heldvalues = heldvalues + rcall('LLEN', PFX .. 'v:' .. key)
end

local ready, pending, leased = rcall('ZCARD', K_READY), rcall('ZCARD', K_PENDING), rcall('ZCARD', K_LEASED)
local delayed = rcall('ZCARD', K_DELAYED)
return {
  tonumber(rcall('HGET', K_META, 'v')) or 0,
  ready + pending + leased + delayed + #held,
  ready,
  pending + rcall('ZCARD', K_TRAILING),
  leased,
  retrying,
  behind,
  #held,
  heldvalues,
  rcall('ZCARD', K_DEAD),
}
