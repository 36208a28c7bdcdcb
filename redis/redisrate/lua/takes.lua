--[[
  takes.lua is take.lua for several events at once, taken in the order
  given: the Allow and Wait calls of one process that came at the same
  time (see flight.go). Each event conforms, or is refused, as it would
  with take.lua run once per event in that order.

  KEYS[1]  tat    STRING  see take.lua
  KEYS[2]  pause  STRING  see take.lua
  ARGV[1]  interval between two events (1/Rate), > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  ARGV[3]  and after: per event, the longest delay accepted, or -1 for any
  Times and durations are whole microseconds of the server's clock, as in
  take.lua; bucket.lua reads and writes the bucket.
  Returns two integers per event: its delay, 0 if it may happen now, or
  -1 if it was refused (nothing taken); and the tat written once it was
  taken, which release.lua needs to give it back (0 if refused).
]]
local now, tat, pause, old = read(KEYS[1], KEYS[2])
local interval, span = tonumber(ARGV[1]), tonumber(ARGV[2])
local out, taken = {}, false
for i = 3, #ARGV do
  local at = conforms(now, tat, pause, interval, span)
  local delay = at - now
  if delay > 0 and ARGV[i] ~= '-1' and delay > tonumber(ARGV[i]) then
    out[#out + 1] = -1
    out[#out + 1] = 0
  else
    if at > tat then
      tat = at
    end
    tat = tat + interval
    taken = true
    out[#out + 1] = delay
    out[#out + 1] = tat
  end
end
if taken then
  write(KEYS[1], tat, old)
end
return out
