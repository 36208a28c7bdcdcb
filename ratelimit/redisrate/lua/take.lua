--[[
  take.lua takes one event from a bucket (GCRA): now, or at the earliest
  instant it conforms, unless that is more than ARGV[3] away.

  KEYS[1]  tat    STRING  the bucket's theoretical arrival time: it is
                          full again at tat; absent means full; expires
                          at tat
  KEYS[2]  pause  STRING  until when the bucket is paused; expires then
  ARGV[1]  interval between two events (1/Rate), > 0
  ARGV[2]  span of a full bucket (Burst * interval)
  ARGV[3]  the longest delay accepted, or -1 for any
  Times and durations are whole microseconds of the server's clock (TIME),
  written with %d: a Lua number holds them exactly, but tostring would
  round them to 14 digits. A key expires at its time, rounded up to the
  millisecond (PXAT).

  The event conforms at the latest of now, the end of the pause, and
  tat + interval - span; taking it moves tat to interval past the later
  of tat and that instant.
  Returns -1 if that instant is too far (nothing is taken), 0 if the
  event may happen now, or {delay, tat}: the event may happen in delay,
  and tat is what was written, which release.lua needs to give it back.

  This runs on every Allow and Wait, so it is kept to three calls (TIME,
  MGET, SET), each given strings (Redis 7.0 formats a number argument with
  printf's %.17g, which costs more than the command), and little
  arithmetic. A tat in the past (the key expires up to a millisecond
  late) is the same as none: the bucket is full.
]]
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local v = redis.call('MGET', KEYS[1], KEYS[2])
local tat = tonumber(v[1])
if not tat or tat < now then
  tat = now
end
local at = tat + ARGV[1] - ARGV[2]
if at < now then
  at = now
end
if v[2] then
  local pause = tonumber(v[2])
  if pause > at then
    at = pause
  end
end
local delay = at - now
if delay > 0 and ARGV[3] ~= '-1' and delay > tonumber(ARGV[3]) then
  return -1
end
if at > tat then
  tat = at
end
tat = tat + ARGV[1]
redis.call('SET', KEYS[1], string.format('%d', tat), 'PXAT', string.format('%d', (tat + 999) / 1000))
if delay == 0 then
  return 0
end
return {delay, tat}
