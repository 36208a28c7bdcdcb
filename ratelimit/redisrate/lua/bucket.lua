--[[
  bucket.lua is what the functions share: the head of the library, run
  once when it loads, whose local functions they call.

  read(tatKey, pauseKey) reads the server's clock and the bucket, and
  returns now, the tat (now if the bucket is full: no tat, or one in the
  past, as a key expires up to a millisecond late) and the end of the
  pause (0 if none), in whole microseconds of the server's clock (TIME).

  conforms(now, tat, pause, interval, span) returns the instant the next
  event conforms at (GCRA): the latest of now, the end of the pause, and
  tat + interval - span.

  write(key, t) stores the time t in key, to expire at t rounded up to
  the millisecond (PXAT): a tat, or a pause's end. It is written with %d: a Lua number holds it
  exactly, but tostring would round it to 14 digits; and Redis 7.0
  formats a number argument with printf's %.17g, which costs more than
  the command.
]]
local function read(tatKey, pauseKey)
  local t = redis.call('TIME')
  local now = t[1] * 1000000 + t[2]
  local v = redis.call('MGET', tatKey, pauseKey)
  local tat = tonumber(v[1])
  if not tat or tat < now then
    tat = now
  end
  return now, tat, tonumber(v[2]) or 0
end

local function conforms(now, tat, pause, interval, span)
  local at = tat + interval - span
  if at < now then
    at = now
  end
  if pause > at then
    at = pause
  end
  return at
end

local function write(key, t)
  redis.call('SET', key, string.format('%d', t), 'PXAT', string.format('%d', (t + 999) / 1000))
end
