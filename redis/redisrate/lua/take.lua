--[[
  take.lua takes one event from a bucket (GCRA): now, or at the earliest
  instant it conforms, unless that is more than ARGV[3] away.

  KEYS[1]  tat    STRING  the bucket's theoretical arrival time: it is
                          full again at tat; absent means full; expires
                          at the end of tat's second
  KEYS[2]  pause  STRING  until when the bucket is paused; expires at the
                          end of that second
  ARGV[1]  interval between two events (1/Rate), > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  ARGV[3]  the longest delay accepted, or -1 for any
  Times and durations are whole microseconds of the server's clock;
  bucket.lua reads and writes the bucket.

  The event conforms at the latest of now, the end of the pause, and
  tat + interval - span; taking it moves tat to interval past the later
  of tat and that instant.
  Returns -1 if that instant is too far (nothing is taken), 0 if the
  event may happen now, or {delay, tat}: the event may happen in delay,
  and tat is what was written, which release.lua needs to give it back.

  This runs on every Allow and Wait, so it is kept to three calls (TIME,
  MGET, SET), each given strings, and little arithmetic.
]]
local now, tat, pause, old = read(KEYS[1], KEYS[2])
local at = conforms(now, tat, pause, ARGV[1], ARGV[2])
local delay = at - now
if delay > 0 and ARGV[3] ~= '-1' and delay > tonumber(ARGV[3]) then
  return -1
end
if at > tat then
  tat = at
end
tat = tat + ARGV[1]
write(KEYS[1], tat, old)
if delay == 0 then
  return 0
end
return {delay, tat}
