--[[
  stats.lua counts the queue at one instant, after moving the keys that
  came due into the ready order and closing the bursts that came due.

  KEYS[1..10] the queue's keys (see lib.lua)
  ARGV[1]     prefix of the queue's names
  Returns {values, ready, pending, leased, retrying, behind, held,
  held values, dead, keys}.
]]
local now = now_us()
local due = 0
for _, k in ipairs({K_LEASED, K_DELAYED, K_PENDING, K_TRAILING}) do
  due = math.max(due, rcall('ZCOUNT', k, '-inf', now))
end
promote(now, due)
local m = rcall('HMGET', K_META, 'v', 'bh', 'hv', 'df')
local ready, pending, leased = rcall('ZCARD', K_READY), rcall('ZCARD', K_PENDING), rcall('ZCARD', K_LEASED)
local delayed, held = rcall('ZCARD', K_DELAYED), rcall('ZCARD', K_HELD)
local deferred = tonumber(m[4]) or 0
return {
  tonumber(m[1]) or 0,
  ready,
  pending + rcall('ZCARD', K_TRAILING),
  leased,
  delayed - deferred,
  tonumber(m[2]) or 0,
  held,
  tonumber(m[3]) or 0,
  rcall('ZCARD', K_DEAD),
  ready + pending + leased + delayed + held,
}
