--[[
  finishclaim.lua ends a lease as finish.lua does and, if it still held,
  then leases ready keys as claim.lua does, at the same instant: one round
  trip for a worker that is done with a batch and wants the next.

  KEYS[1..12] and ARGV[1..6] as in finish.lua
  ARGV[7..9]  ARGV[2..4] of claim.lua: most keys, most values, TTL
  Returns {-1} if the lease lapsed, ended or was superseded (and nothing
  changed); otherwise finish.lua's reply followed by claim.lua's:
  {more, next, key, fence, attempt, count, value..., key, ...}.
]]
-- @include lib.lua
local now = now_us()
local more = finish_lease(ARGV[2], KEYS[11], KEYS[12], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], now)
if more < 0 then
  return {-1}
end
local out = claim_ready(now, tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]))
table.insert(out, 1, more)
return out
