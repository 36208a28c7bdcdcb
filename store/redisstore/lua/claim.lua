--[[
  claim.lua leases up to ARGV[2] ready keys, oldest-ready first, after
  moving the keys that came due into the ready order.

  KEYS[1..10] the queue's keys (see lib.lua); the leased keys' own names
              are built from ARGV[1], in the same hash slot
  ARGV[1]     prefix of the queue's names
  ARGV[2]     most keys to lease, at least 1
  ARGV[3]     most values in a lease, 0 for all that are ready
  ARGV[4]     TTL in microseconds, -1 for ever
  Returns {next, key, fence, attempt, count, value..., key, ...}: one
  group per lease, each value as stored ("<time added>:<value>"), after
  next, the microseconds until the earliest key this call did not lease is
  ready: 0 if one is, -1 if none is due ever.
]]
-- @include lib.lua
local now = now_us()
local want, maxbatch = tonumber(ARGV[2]), tonumber(ARGV[3])
promote(now, want + 16)
local got = rcall('ZPOPMIN', K_READY, want)
local m = earliest()
local out = {0}
if #got > 0 then
  local exp = deadline(now, tonumber(ARGV[4]))
  if exp ~= INF and (m == nil or exp < m) then
    -- A worker waiting for m would miss these leases' lapse.
    wake()
    m = exp
  end
  local fence = rcall('HINCRBY', K_META, 'f', #got / 2) - #got / 2
  local zadd = {}
  for i = 1, #got, 2 do
    local key = got[i]
    local kk, vk = PFX .. 'k:' .. key, PFX .. 'v:' .. key
    local h = rcall('HMGET', kk, 'n', 'a', 'b', 'bd')
    local n, b = tonumber(h[1]), tonumber(h[3]) or 0
    if b > 0 and tonumber(h[4]) <= now then
      close_burst(kk, key)
      b = 0
    end
    if n == nil then
      n = rcall('LLEN', vk) - b
      if maxbatch > 0 and n > maxbatch then
        n = maxbatch
      end
    end
    fence = fence + 1
    if n > 0 then
      local a = (tonumber(h[2]) or 0) + 1
      rcall('HSET', kk, 's', 'l', 'f', fence, 'a', a, 'n', n)
      zadd[#zadd + 1] = exp
      zadd[#zadd + 1] = key
      local vals = rcall('LRANGE', vk, 0, n - 1)
      out[#out + 1] = key
      out[#out + 1] = fence
      out[#out + 1] = a
      out[#out + 1] = #vals
      for j = 1, #vals do
        out[#out + 1] = vals[j]
      end
    elseif b > 0 then
      -- Never so while the scripts keep the model; an empty lease would
      -- take every value (LRANGE 0 -1), so the key waits for its burst.
      settle(key, kk, b, now)
    else
      rcall('DEL', kk)
    end
  end
  if #zadd > 0 then
    rcall('ZADD', K_LEASED, unpack(zadd))
  end
end
if rcall('ZCARD', K_READY) > 0 then
  -- More is ready than this worker took: pass the wake-up on.
  wake()
elseif m == nil or m == INF then
  out[1] = -1
else
  out[1] = math.max(m - now, 1)
end
return out
