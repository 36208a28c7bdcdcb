--[[
  stats.lua counts the queue at one instant, after folding the inbox and
  moving the keys that came due into the ready order and setting aside
  the paused keys among them (see lib.lua's parked). It visits the held,
  the delayed and the paused keys, and those in multi mode; a queue
  without features (see lib.lua) has neither paused nor multi-mode keys.

  KEYS[1]     the queue's ready (see lib.lua)
  ARGV[1]     prefix of the queue's names
  ARGV[2]     how many keys, first in the ready order, to find the oldest
              value among; 0 for none
  Returns FOLDING if Adds are left to fold; otherwise {values, keys, ready,
  pending, leased, retrying, behind, held, held values, dead, paused keys,
  paused (1 or 0)}, then, if
  ARGV[2] is not 0, when the oldest value of those keys was added, in
  microseconds, 0 if none is ready.
]]
-- @include lib.lua
local now, now_s = clock()
if not fold() then
  return FOLDING
end
local due = 0
for _, k in ipairs({K_LEASED, K_DELAYED, K_PENDING}) do
  due = math.max(due, rcall('ZCOUNT', k, '-inf', now_s))
end
promote(now_s, due)

-- The paused keys wait for ResumeKey: none counts as ready or retrying.
local on = features()
local paused = on and rcall('SMEMBERS', K_PAUSEDKEYS) or {}
local is_paused = {}
for _, key in ipairs(paused) do
  is_paused[key] = true
  local set = ready_set(PFX .. 'k:' .. key)
  local since = rcall('ZSCORE', set, key)
  if since then
    rcall('ZREM', set, key)
    park(key, since)
  end
end

local retrying, behind = 0, 0
for _, key in ipairs(rcall('ZRANGE', K_DELAYED, '0', '-1')) do
  local h = rcall('HMGET', PFX .. 'k:' .. key, 's', 'n')
  if h[1] == 't' and not is_paused[key] then
    retrying = retrying + 1
    behind = behind + rcall('LLEN', PFX .. 'v:' .. key) - tonumber(h[2])
  end
end
local held, heldvalues = rcall('ZRANGE', K_HELD, '0', '-1'), 0
for _, key in ipairs(held) do
  heldvalues = heldvalues + rcall('LLEN', PFX .. 'v:' .. key)
end

local ready, pending, leased = rcall('ZCARD', K_READY), rcall('ZCARD', K_PENDING), rcall('ZCARD', K_LEASED)
ready = ready + tenants_ready()
-- A key in multi mode is leased while a lease of it is out, though it
-- may be ready for another; one that waits for its kept batch retries.
for _, key in ipairs(on and rcall('SMEMBERS', K_MULTI) or {}) do
  local out, retry, left = m_counts(key, now, now_s)
  if rcall('ZSCORE', ready_set(PFX .. 'k:' .. key), key) then
    if out > 0 then
      ready, leased = ready - 1, leased + 1
    end
  elseif rcall('ZSCORE', K_PARKED, key) then
    if out > 0 then
      leased = leased + 1
    end
  elseif retry and not is_paused[key] and rcall('ZSCORE', K_DELAYED, key) then
    retrying, behind = retrying + 1, behind + left
  end
end
local delayed, parked = rcall('ZCARD', K_DELAYED), on and rcall('ZCARD', K_PARKED) or 0
local out = {
  tonumber(rcall('HGET', K_META, 'v')) or 0,
  ready + pending + leased + delayed + #held + parked,
  ready,
  -- Bursts behind other values that came due are closed, if not yet so.
  pending + rcall('ZCOUNT', K_TRAILING, '(' .. now_s, '+inf'),
  leased,
  retrying,
  behind,
  #held,
  heldvalues,
  rcall('ZCARD', K_DEAD),
  #paused,
  on and rcall('EXISTS', K_PAUSED) or 0,
}
local lim = tonumber(ARGV[2]) or 0
if lim > 0 then
  out[#out + 1] = oldest(lim) or 0
end
return out
