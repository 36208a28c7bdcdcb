#!lua name=floor

--[[
  The floor of pacer's strict guarantees on Redis, and nothing else: each
  key's values in a list, in Add order; the keys with values and no lease
  in a ready order (a ZSET, by the time they became ready); a lease of a
  key is a member "fence:key" of a ZSET of leases, whose score is its
  expiry, so that one ZSCORE checks a lease's fence and its expiry
  together. The fence comes from a counter of the queue (INCRBY).

  keys: ready (ZSET), leases (ZSET), fences (counter); the lists are
  named by args[1] .. key, with the same hash tag.
]]

-- now returns the server's time in microseconds, as a number and as a
-- string: Lua would pass the number to a command as %.14g, which drops
-- its last digits.
local function now()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return us, string.format('%d', us)
end

-- floor_add: args[1] the lists' prefix, args[2] the key, args[3] the
-- value. A key whose list was empty becomes ready: it had no lease.
local function add(keys, args)
  if redis.call('RPUSH', args[1] .. args[2], args[3]) == 1 then
    local _, t = now()
    redis.call('ZADD', keys[1], t, args[2])
  end
  return 1
end

-- floor_step: args[1] the lists' prefix, args[2] the TTL of a lease in
-- microseconds, args[3] how many leases to end (n), then n pairs of key
-- and fence, then how many keys to lease. Ends each lease that holds
-- (its value leaves the list; its key goes back to ready if it has more),
-- then takes expired leases back to the front of ready, then leases the
-- first keys of ready. Returns one reply a lease ended (1 ended, -1
-- lapsed or superseded), then key, fence, value for each lease taken.
local function step(keys, args)
  local ready, leases, fences = keys[1], keys[2], keys[3]
  local prefix, ttl, n = args[1], tonumber(args[2]), tonumber(args[3])
  local t, t_s = now()
  local out, ended, back = {}, {}, {}
  local i = 4
  for c = 1, n do
    local key = args[i]
    local m = args[i + 1] .. ':' .. key
    i = i + 2
    local expiry = redis.call('ZSCORE', leases, m)
    if not expiry or tonumber(expiry) < t then
      out[c] = -1
    else
      local list = prefix .. key
      redis.call('LPOP', list)
      ended[#ended + 1] = m
      if redis.call('LLEN', list) > 0 then
        back[#back + 1] = t_s
        back[#back + 1] = key
      end
      out[c] = 1
    end
  end
  if #ended > 0 then
    redis.call('ZREM', leases, unpack(ended))
  end
  if #back > 0 then
    redis.call('ZADD', ready, unpack(back))
  end
  local want = tonumber(args[i])
  if want == 0 then
    return out
  end
  local lapsed = redis.call('ZRANGE', leases, '-inf', t_s, 'BYSCORE', 'LIMIT', 0, 64)
  for j = 1, #lapsed do
    local m = lapsed[j]
    redis.call('ZREM', leases, m)
    redis.call('ZADD', ready, 0, string.sub(m, string.find(m, ':', 1, true) + 1))
  end
  local got = redis.call('ZPOPMIN', ready, want)
  local k = #got / 2
  if k == 0 then
    return out
  end
  local top = redis.call('INCRBY', fences, k)
  local taken, expiry = {}, string.format('%d', t + ttl)
  for j = 1, k do
    local key, fence = got[2 * j - 1], top - k + j
    out[#out + 1] = key
    out[#out + 1] = fence
    out[#out + 1] = redis.call('LINDEX', prefix .. key, 0)
    taken[#taken + 1] = expiry
    taken[#taken + 1] = fence .. ':' .. key
  end
  redis.call('ZADD', leases, unpack(taken))
  return out
end

--[[
  The same guarantees with the state of a key in a hash of its own, read
  and written as redisstore's strict path does (lib.lua's finish_lease
  and claim_ready): a Finish reads the twelve fields that finish_lease
  reads (state s, fence f, expiry x, and those of its other features,
  absent here) and writes s, a and n when the key has more; a claim reads
  the six that claim_ready reads and writes its nine (s, f, x, a, n, c,
  o, q), and reads a value past the lease (LRANGE 0 1) to keep in q
  whether one follows, which spares the Finish an LLEN. The leases ZSET
  holds keys, by expiry, as redisstore's leased does. Nothing else of
  redisstore's is here: this is the floor with redisstore's layout of a
  key's state, to tell the layout's cost from the rest of its scripts'.

  floor_add_keyhash: as floor_add, args[4] the hashes' prefix.
  floor_step_keyhash: as floor_step, args[4] the hashes' prefix, the
  pairs and the count from args[5].
]]

local FINISH_FIELDS = {'s', 'f', 'x', 'n', 'a', 'b', 'bd', 'e', 'g', 'tn', 'q', 'T'}
local CLAIM_FIELDS = {'n', 'a', 'b', 'bd', 'u', 'g'}

local function add_keyhash(keys, args)
  if redis.call('RPUSH', args[1] .. args[2], args[3]) == 1 then
    local _, t = now()
    redis.call('HSET', args[4] .. args[2], 's', 'r')
    redis.call('ZADD', keys[1], t, args[2])
  end
  return 1
end

local function step_keyhash(keys, args)
  local ready, leases, fences = keys[1], keys[2], keys[3]
  local prefix, ttl, n, hprefix = args[1], tonumber(args[2]), tonumber(args[3]), args[4]
  local t, t_s = now()
  local out, ended, back = {}, {}, {}
  local i = 5
  for c = 1, n do
    local key, fence = args[i], args[i + 1]
    i = i + 2
    local kk, vk = hprefix .. key, prefix .. key
    local h = redis.call('HMGET', kk, unpack(FINISH_FIELDS))
    if h[1] ~= 'l' or h[2] ~= fence or tonumber(h[3]) < t then
      out[c] = -1
    else
      ended[#ended + 1] = key
      local more = h[11] == fence or redis.call('LLEN', vk) > 1
      if more then
        redis.call('LTRIM', vk, 1, -1)
        redis.call('HSET', kk, 's', 'r', 'a', '0', 'n', '0')
        back[#back + 1] = t_s
        back[#back + 1] = key
      else
        redis.call('DEL', kk, vk)
      end
      out[c] = 1
    end
  end
  if #ended > 0 then
    redis.call('ZREM', leases, unpack(ended))
  end
  if #back > 0 then
    redis.call('ZADD', ready, unpack(back))
  end
  local want = tonumber(args[i])
  if want == 0 then
    return out
  end
  local lapsed = redis.call('ZRANGE', leases, '-inf', t_s, 'BYSCORE', 'LIMIT', 0, 64)
  for j = 1, #lapsed do
    redis.call('ZREM', leases, lapsed[j])
    redis.call('HSET', hprefix .. lapsed[j], 's', 'r')
    redis.call('ZADD', ready, 0, lapsed[j])
  end
  local got = redis.call('ZPOPMIN', ready, want)
  local k = #got / 2
  if k == 0 then
    return out
  end
  local top = redis.call('INCRBY', fences, k)
  local taken, expiry = {}, string.format('%d', t + ttl)
  for j = 1, k do
    local key, fence = got[2 * j - 1], top - k + j
    local kk, vk = hprefix .. key, prefix .. key
    local h = redis.call('HMGET', kk, unpack(CLAIM_FIELDS))
    local a = (tonumber(h[2]) or 0) + 1
    local vals = redis.call('LRANGE', vk, 0, 1)
    local fs = string.format('%d', fence)
    redis.call('HSET', kk, 's', 'l', 'f', fs, 'x', expiry, 'a', a, 'n', 1, 'c', t_s, 'o', '', 'q', #vals > 1 and fs or '0')
    out[#out + 1] = key
    out[#out + 1] = fence
    out[#out + 1] = vals[1]
    taken[#taken + 1] = expiry
    taken[#taken + 1] = key
  end
  redis.call('ZADD', leases, unpack(taken))
  return out
end

--[[
  KeyHash, lean: the key's hash holds only what this path needs (state s,
  fence f, expiry x, and q); a Finish reads those four and writes s alone
  (so that its lease ends once), and a claim writes them without reading
  first. The same commands as floor_step_keyhash but for the claim's
  HMGET, and fewer fields in the others.

  floor_step_keyhash_lean: as floor_step_keyhash.
]]

local LEAN_FIELDS = {'s', 'f', 'x', 'q'}

local function step_keyhash_lean(keys, args)
  local ready, leases, fences = keys[1], keys[2], keys[3]
  local prefix, ttl, n, hprefix = args[1], tonumber(args[2]), tonumber(args[3]), args[4]
  local t, t_s = now()
  local out, ended, back = {}, {}, {}
  local i = 5
  for c = 1, n do
    local key, fence = args[i], args[i + 1]
    i = i + 2
    local kk, vk = hprefix .. key, prefix .. key
    local h = redis.call('HMGET', kk, unpack(LEAN_FIELDS))
    if h[1] ~= 'l' or h[2] ~= fence or tonumber(h[3]) < t then
      out[c] = -1
    else
      ended[#ended + 1] = key
      if h[4] == fence or redis.call('LLEN', vk) > 1 then
        redis.call('LTRIM', vk, 1, -1)
        redis.call('HSET', kk, 's', 'r')
        back[#back + 1] = t_s
        back[#back + 1] = key
      else
        redis.call('DEL', kk, vk)
      end
      out[c] = 1
    end
  end
  if #ended > 0 then
    redis.call('ZREM', leases, unpack(ended))
  end
  if #back > 0 then
    redis.call('ZADD', ready, unpack(back))
  end
  local want = tonumber(args[i])
  if want == 0 then
    return out
  end
  local lapsed = redis.call('ZRANGE', leases, '-inf', t_s, 'BYSCORE', 'LIMIT', 0, 64)
  for j = 1, #lapsed do
    redis.call('ZREM', leases, lapsed[j])
    redis.call('HSET', hprefix .. lapsed[j], 's', 'r')
    redis.call('ZADD', ready, 0, lapsed[j])
  end
  local got = redis.call('ZPOPMIN', ready, want)
  local k = #got / 2
  if k == 0 then
    return out
  end
  local top = redis.call('INCRBY', fences, k)
  local taken, expiry = {}, string.format('%d', t + ttl)
  for j = 1, k do
    local key, fence = got[2 * j - 1], top - k + j
    local vk = prefix .. key
    local vals = redis.call('LRANGE', vk, 0, 1)
    local fs = string.format('%d', fence)
    redis.call('HSET', hprefix .. key, 's', 'l', 'f', fs, 'x', expiry, 'q', #vals > 1 and fs or '0')
    out[#out + 1] = key
    out[#out + 1] = fence
    out[#out + 1] = vals[1]
    taken[#taken + 1] = expiry
    taken[#taken + 1] = key
  end
  redis.call('ZADD', leases, unpack(taken))
  return out
end

redis.register_function('floor_add', add)
redis.register_function('floor_step', step)
redis.register_function('floor_add_keyhash', add_keyhash)
redis.register_function('floor_step_keyhash', step_keyhash)
redis.register_function('floor_step_keyhash_lean', step_keyhash_lean)
