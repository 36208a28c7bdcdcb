--[[
  tries.lua is try.lua, taking, for several keys of one Keyed at once: the
  TakeKey calls of one process that came at the same time (tries.go). It
  reads the server's clock once, then takes each key's event in the order
  given, each as try.lua would with that clock: a key that comes twice
  sees its first take. Every key of a Keyed shares its hash tag, so a
  Redis Cluster serves them all from one node.

  KEYS[2i-1]  tat    STRING  of the i-th key, as in take.lua
  KEYS[2i]    pause  STRING  of the i-th key, as in take.lua
  ARGV[1]  interval between two events (1/Rate), > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  Times and durations are whole microseconds of the server's clock.

  Returns one integer per key, as try.lua: 0 if its event was taken, or
  the delay until it conforms, > 0, with nothing taken.

  It reads every bucket in one MGET and writes each taken one once, at
  the end, since each redis.call costs the server more than the command.
]]
local now = clock()
local interval, span = tonumber(ARGV[1]), tonumber(ARGV[2])
local v = redis.call('MGET', unpack(KEYS))
local buckets, written, out = {}, {}, {}
for i = 1, #KEYS, 2 do
  local b = buckets[KEYS[i]]
  if not b then
    local tat, pause, old = state(now, v[i], v[i + 1])
    b = { tat = tat, pause = pause, old = old }
    buckets[KEYS[i]] = b
  end
  local at = conforms(now, b.tat, b.pause, interval, span)
  if at > now then
    out[#out + 1] = at - now
  else
    if not b.taken then
      b.taken = true
      written[#written + 1] = KEYS[i]
    end
    b.tat = b.tat + interval
    out[#out + 1] = 0
  end
end
for _, key in ipairs(written) do
  local b = buckets[key]
  write(key, b.tat, b.old)
end
return out
