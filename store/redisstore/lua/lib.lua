--[[
  lib.lua is included in every script of the package, where the script
  says "-- @include lib.lua": it names the queue's keys and holds the steps
  that several scripts share.

  KEYS[1..10] of every script but add.lua are the queue's own keys, all
  under the hash tag {prefix:queue}, and every script names them from the
  prefix:
    KEYS[1]  ready     ZSET  key -> when it became ready; leased lowest first
    KEYS[2]  pending   ZSET  key -> when its burst is due, for keys with
                             nothing but an open burst
    KEYS[3]  trailing  ZSET  key -> when its burst is due, for keys with an
                             open burst behind other values
    KEYS[4]  delayed   ZSET  key -> when its retried or deferred batch is due
    KEYS[5]  leased    ZSET  key -> when its lease lapses
    KEYS[6]  held      ZSET  key -> when it was held
    KEYS[7]  meta      HASH  f: last fence, v: values, d: last dead letter id
    KEYS[8]  wake      ZSET  at most one member, popped by a waiting worker
    KEYS[9]  dead      ZSET  dead letter id -> id
    KEYS[10] deadat    ZSET  dead letter id -> when it was dropped
  ARGV[1] of every script is the prefix of those names, "{prefix:queue}:".

  A key of the queue is in exactly one of ready, pending, delayed, leased
  and held while it has values (and in trailing too while an open burst
  waits behind its head). It has two more names, built from ARGV[1] and in
  the same hash slot: ARGV[1].."v:"..key, the LIST of its values, and
  ARGV[1].."k:"..key, a HASH with
    s   state: r (or absent) ready, p pending, l leased, t retrying,
        d deferred, h held
    f   fence of its last lease
    a   leases of its head batch that counted as attempts
    n   size of its head batch once a lease fixed it (absent: not fixed)
    b   values at the tail in an open burst (absent: no open burst)
    bf  when that burst began, bd when it is due
  Both go when the key has no values left; a key that was only ever ready
  has no HASH. A dead letter is the LIST
  ARGV[1].."d:"..id: key, error, attempt, time, then the values.

  Times are microseconds of the server's clock (TIME); a duration of -1 is
  for ever, and so is a time of inf. Each value is stored as
  "<time added>:<value>".
]]
local rcall = redis.call
local PFX = ARGV[1]
-- The names come from the prefix, not KEYS, so that a script may declare
-- only the keys it touches on its common path (see add.lua).
local K_READY, K_PENDING, K_TRAILING = PFX .. 'ready', PFX .. 'pending', PFX .. 'trailing'
local K_DELAYED, K_LEASED, K_HELD = PFX .. 'delayed', PFX .. 'leased', PFX .. 'held'
local K_META, K_WAKE, K_DEAD, K_DEADAT = PFX .. 'meta', PFX .. 'wake', PFX .. 'dead', PFX .. 'deadat'
local INF = math.huge

local function now_us()
  local t = rcall('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- deadline is now+d, with d -1 for ever.
local function deadline(now, d)
  if d < 0 then
    return INF
  end
  return now + d
end

-- burst_due is when a burst that began at first is due after an Add at now
-- with Wait wait and MaxWait maxwait (0: no bound).
local function burst_due(now, first, wait, maxwait)
  local due = deadline(now, wait)
  if maxwait > 0 then
    due = math.min(due, first + maxwait)
  end
  return due
end

-- wake lets one waiting worker return from its blocking pop. Once per
-- script is enough: the member is the same, and no script pops it.
local woken = false
local function wake()
  if not woken then
    woken = true
    rcall('ZADD', K_WAKE, 0, 'w')
  end
end

-- earliest is the first time a key that is not ready becomes ready: a
-- burst, a delayed batch or a lapse; nil when none will.
local function earliest()
  local m
  for _, k in ipairs({K_PENDING, K_DELAYED, K_LEASED}) do
    local r = rcall('ZRANGE', k, 0, 0, 'WITHSCORES')
    if r[2] then
      local s = tonumber(r[2])
      if m == nil or s < m then
        m = s
      end
    end
  end
  return m
end

-- wake_before wakes a worker when t, about to be scheduled, comes before
-- everything scheduled so far: the waiting workers' timers are later.
local function wake_before(t)
  if t == INF then
    return
  end
  local m = earliest()
  if m == nil or t < m then
    wake()
  end
end

-- close_burst ends the open burst of key: its values are ready.
local function close_burst(kk, key)
  rcall('HDEL', kk, 'b', 'bf', 'bd')
  rcall('ZREM', K_TRAILING, key)
end

-- make_ready puts key in the ready order at t.
local function make_ready(key, kk, t)
  rcall('HSET', kk, 's', 'r')
  rcall('ZADD', K_READY, t, key)
end

-- settle places a key that is no longer leased, delayed or held and has
-- left values: ready at now, or pending until its burst is due if all of
-- them are in the burst.
local function settle(key, kk, left, now)
  local h = rcall('HMGET', kk, 'b', 'bd')
  local b = tonumber(h[1]) or 0
  if b > 0 and tonumber(h[2]) <= now then
    close_burst(kk, key)
    b = 0
  end
  if left > b then
    make_ready(key, kk, now)
    wake()
    return
  end
  local due = tonumber(h[2])
  rcall('ZREM', K_TRAILING, key)
  rcall('HSET', kk, 's', 'p')
  wake_before(due)
  rcall('ZADD', K_PENDING, due, key)
end

-- place updates key, which had values before n more came at now, as Add
-- does: h holds its fields s, b, bf and bd from before.
local function place(key, kk, n, now, wait, maxwait, h)
  local s, b = h[1], tonumber(h[2]) or 0
  if b > 0 and tonumber(h[4]) <= now then
    -- The open burst came due: its values are ready, in its place.
    close_burst(kk, key)
    b = 0
    if s == 'p' then
      rcall('ZREM', K_PENDING, key)
      make_ready(key, kk, tonumber(h[4]))
      s = 'r'
    end
  end
  if wait == 0 then
    -- Ready at once, and so is the burst they queue behind.
    if b > 0 then
      close_burst(kk, key)
      if s == 'p' then
        rcall('ZREM', K_PENDING, key)
        make_ready(key, kk, now)
        wake()
      end
    end
    return
  end
  if b == 0 then
    -- A new burst behind values that are ready, leased, delayed or held.
    local due = burst_due(now, now, wait, maxwait)
    rcall('HSET', kk, 'b', n, 'bf', now, 'bd', due)
    rcall('ZADD', K_TRAILING, due, key)
    return
  end
  local due = burst_due(now, tonumber(h[3]), wait, maxwait)
  rcall('HSET', kk, 'b', b + n, 'bd', due)
  if s ~= 'p' then
    rcall('ZADD', K_TRAILING, due, key)
    return
  end
  if due < tonumber(h[4]) then
    wake_before(due)
  end
  rcall('ZADD', K_PENDING, due, key)
end

-- append adds the stored values vals to the tail of key, ready at once,
-- as Redrive does.
local function append(key, kk, vk, vals, now)
  local n = #vals
  local len = rcall('RPUSH', vk, unpack(vals))
  rcall('HINCRBY', K_META, 'v', n)
  if len == n then
    -- A new key, whose state is ready while its hash has no s.
    rcall('ZADD', K_READY, now, key)
    wake()
    return
  end
  place(key, kk, n, now, 0, 0, rcall('HMGET', kk, 's', 'b', 'bf', 'bd'))
end

-- due_by returns up to lim members of the ZSET k whose score is at most
-- now, lowest first, with their scores, and removes them from k.
local function due_by(k, now, lim)
  local r = rcall('ZRANGEBYSCORE', k, '-inf', now, 'WITHSCORES', 'LIMIT', 0, lim)
  if #r > 0 then
    rcall('ZREMRANGEBYRANK', k, 0, #r / 2 - 1)
  end
  return r
end

-- promote moves up to lim keys of each kind that are due by now into the
-- ready order, at the time each became due, and closes the bursts that
-- came due behind other values. The keys left behind are due no sooner
-- than those moved, so the first lim keys of the ready order are right.
local function promote(now, lim)
  -- Lapsed leases: the same batch, leased again as the next attempt.
  local r = due_by(K_LEASED, now, lim)
  for i = 1, #r, 2 do
    make_ready(r[i], PFX .. 'k:' .. r[i], r[i + 1])
  end
  -- Retried and deferred batches.
  r = due_by(K_DELAYED, now, lim)
  for i = 1, #r, 2 do
    make_ready(r[i], PFX .. 'k:' .. r[i], r[i + 1])
  end
  -- Bursts that came due, alone or behind other values.
  r = due_by(K_PENDING, now, lim)
  for i = 1, #r, 2 do
    local kk = PFX .. 'k:' .. r[i]
    rcall('HDEL', kk, 'b', 'bf', 'bd')
    make_ready(r[i], kk, r[i + 1])
  end
  r = due_by(K_TRAILING, now, lim)
  for i = 1, #r, 2 do
    rcall('HDEL', PFX .. 'k:' .. r[i], 'b', 'bf', 'bd')
  end
end

-- leased_by returns the hash fields s, f and then fs of key if its lease
-- with fence fence still holds at now; nil if it lapsed, ended or was
-- superseded.
local function leased_by(kk, key, fence, now, ...)
  local h = rcall('HMGET', kk, 's', 'f', ...)
  if h[1] ~= 'l' or h[2] ~= fence then
    return nil
  end
  local exp = rcall('ZSCORE', K_LEASED, key)
  if not exp or tonumber(exp) <= now then
    return nil
  end
  return h
end

-- finish_lease ends the lease of key with fence fence, if it still holds
-- at now, as kind says (1 ack, 2 drop, 3 retry, 4 defer, 5 hold), after
-- the delay after of a retry or defer (-1: for ever), with the error why
-- of a drop. kk and vk are the key's HASH and LIST. It returns 1 if the
-- key still has values, 0 if not, -1 if the lease lapsed, ended or was
-- superseded (and nothing changed).
local function finish_lease(key, kk, vk, fence, kind, after, why, now)
  local h = leased_by(kk, key, fence, now, 'n', 'a')
  if not h then
    return -1
  end
  local n = tonumber(h[3])
  rcall('ZREM', K_LEASED, key)

  if kind == 1 or kind == 2 then
    if kind == 2 then
      local id = rcall('HINCRBY', K_META, 'd', 1)
      local dk = PFX .. 'd:' .. id
      rcall('RPUSH', dk, key, why, h[4], string.format('%d', now))
      rcall('RPUSH', dk, unpack(rcall('LRANGE', vk, 0, n - 1)))
      rcall('ZADD', K_DEAD, id, id)
      rcall('ZADD', K_DEADAT, now, id)
    end
    rcall('LTRIM', vk, n, -1)
    rcall('HINCRBY', K_META, 'v', -n)
    local left = rcall('LLEN', vk)
    if left == 0 then
      rcall('DEL', kk)
      return 0
    end
    -- The next batch starts at attempt 1.
    rcall('HDEL', kk, 'n', 'a')
    settle(key, kk, left, now)
    return 1
  end

  if kind == 5 then
    rcall('HSET', kk, 's', 'h')
    rcall('ZADD', K_HELD, now, key)
    return 1
  end

  -- Retry or defer: the same batch, due after the delay; a defer does not
  -- count as an attempt.
  if kind == 4 then
    rcall('HSET', kk, 'a', tonumber(h[4]) - 1)
  end
  local due = deadline(now, after)
  if due <= now then
    make_ready(key, kk, now)
    wake()
    return 1
  end
  if kind == 3 then
    rcall('HSET', kk, 's', 't')
  else
    rcall('HSET', kk, 's', 'd')
  end
  wake_before(due)
  rcall('ZADD', K_DELAYED, due, key)
  return 1
end

-- claim_ready leases up to want ready keys at now, oldest-ready first, with
-- at most maxbatch values each (0: all that are ready) for ttl (-1: for
-- ever), after moving the keys that came due into the ready order. It
-- returns claim.lua's reply: {next, key, fence, attempt, count, value...,
-- key, ...}.
local function claim_ready(now, want, maxbatch, ttl)
  promote(now, want + 16)
  local got = rcall('ZPOPMIN', K_READY, want)
  local out = {0}
  if #got > 0 then
    local exp = deadline(now, ttl)
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
    out[1] = 0
    return out
  end
  -- Only now, and after the new leases joined leased: a worker with keys
  -- ready has no use for next.
  local m = earliest()
  if m == nil or m == INF then
    out[1] = -1
  else
    out[1] = math.max(m - now, 1)
    if #got > 0 then
      -- This worker may have been the one waiting for m, the next key due
      -- (perhaps one of these leases' lapse): it is busy now, so a waiting
      -- worker takes its place.
      wake()
    end
  end
  return out
end
