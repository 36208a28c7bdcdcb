--[[
  bucket.lua is what the functions share: the head of the library, run
  once when it loads, whose local functions they call.

  read(tatKey, pauseKey) reads the server's clock and the bucket, and
  returns now, the tat (now if the bucket is full: no tat, or one in the
  past, as a key expires up to a second late), the end of the pause (0 if
  none), and the tat as stored (nil if none), in whole microseconds of the
  server's clock (TIME). It is clock() then state(now, tat, pause) of the
  two keys' values as MGET read them, which tries.lua calls on its own to
  read many buckets at once.

  conforms(now, tat, pause, interval, span) returns the instant the next
  event conforms at (GCRA): the latest of now, the end of the pause, and
  tat + interval - span.

  write(key, t, old) stores the time t, a tat or a pause's end, in key,
  which held old (nil if nothing). A key expires at the first whole
  second of the server's clock past its time (PXAT): late enough to be
  harmless, as a time in the past means a full bucket, or no pause. So a
  write whose old time was in the same second as t keeps the key's expiry
  (KEEPTTL), which spares the server the expiry's update on most writes
  of a busy bucket. Times are written with %d: a Lua number holds them
  exactly, but tostring would round them to 14 digits; and Redis 7.0
  formats a number argument with printf's %.17g, which costs more than
  the command.
]]
local function clock()
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2]
end

local function state(now, storedTat, storedPause)
  local old = tonumber(storedTat)
  local tat = old
  if not tat or tat < now then
    tat = now
  end
  return tat, tonumber(storedPause) or 0, old
end

local function read(tatKey, pauseKey)
  local now = clock()
  local v = redis.call('MGET', tatKey, pauseKey)
  return now, state(now, v[1], v[2])
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

local function write(key, t, old)
  local second = t - t % 1000000
  if old and old - old % 1000000 == second then
    redis.call('SET', key, string.format('%d', t), 'KEEPTTL')
  else
    redis.call('SET', key, string.format('%d', t), 'PXAT', string.format('%d', second / 1000 + 1000))
  end
end
