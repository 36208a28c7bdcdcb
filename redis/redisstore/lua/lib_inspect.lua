--[[
  lib_inspect.lua goes on from lib.lua, in the same library: the steps of
  the functions that show a queue to an operator (keys.lua, key.lua,
  values.lua, reindex.lua, and stats.lua's oldest). They read the keys'
  state as it is at the call's instant, and change nothing that they show:
  a batch, burst or lease that came due and was not moved into the ready
  order yet reads as ready since it came due, as promote would make it.

  A key is one of the states of store.KeyState, replied as its number:
    1 debouncing  pending, its burst not due yet
    2 ready       in ready or parked, or in pending, delayed or leased and
                  due
    3 leased      in leased, its lease not lapsed yet
    4 retrying    in delayed with s = t, not due yet
    5 held        in held
    6 deferred    in delayed with s = d, not due yet (for its KeyRate
                  token if its hash's K is when it is due)
    7 scheduled   in delayed with s = w, its first value not due yet
]]
local DEBOUNCING, READY, LEASED, RETRYING, HELD, DEFERRED, SCHEDULED = 1, 2, 3, 4, 5, 6, 7

-- key_state returns the state of key at now, with since and until (times
-- as the scripts store them, or false), whether until is a MaxWait
-- deadline (1 or 0), the holder of a lease that holds and the error of
-- its head batch ('' if none), the fields a and f of its hash, and its
-- leases out (lib_perkey.lua's m_state, for a key in multi mode), and,
-- for a deferred key, 1 if a Claim deferred it for its KeyRate token (0 or
-- nil otherwise); nil if key is not in any state set (it has no values).
local function key_state(key, now)
  local h = rcall('HMGET', PFX .. 'k:' .. key, 's', 'x', 'bd', 'm', 'c', 'o', 'e', 'a', 'f', 'K')
  local s, st, till, maxwait, holder = h[1], READY, false, 0, ''
  if s == 'm' then
    return m_state(key, now, str(now))
  end
  -- since, or until for the states that end by themselves: due.
  local due
  if not s or s == 'r' then
    due = rcall('ZSCORE', ready_set(PFX .. 'k:' .. key), key) or rcall('ZSCORE', K_PARKED, key)
  elseif s == 'p' then
    due = h[3]
  elseif s == 'l' then
    -- A lease taken before x was kept has its lapse in leased only.
    due = h[2] or rcall('ZSCORE', K_LEASED, key)
  elseif s == 'h' then
    due = rcall('ZSCORE', K_HELD, key)
  else
    due = rcall('ZSCORE', K_DELAYED, key)
  end
  if not due then
    -- In no state set: the key has no values.
    return nil
  end
  local since, token = due, 0
  if s == 'h' then
    st = HELD
  elseif s and s ~= 'r' and tonumber(due) > now then
    since, till = false, due
    if s == 'p' then
      st = DEBOUNCING
      if h[4] == '1' then
        maxwait = 1
      end
    elseif s == 'l' then
      st, since, holder = LEASED, h[5], h[6] or ''
    elseif s == 't' then
      st = RETRYING
    elseif s == 'w' then
      st = SCHEDULED
    else
      st = DEFERRED
      if h[10] and tonumber(h[10]) == tonumber(due) then
        token = 1
      end
    end
  end
  return st, since, till, maxwait, holder, h[7] or '', tonumber(h[8]) or 0, tonumber(h[9]) or 0, 0, token
end

-- stamp returns the time a stored value was added, as stored.
local function stamp(v)
  return string.match(v, '^%d+')
end

-- state_set returns the set that holds the keys in state, but for ready,
-- whose keys are in every set: a key whose score in that set is past is
-- ready.
local function state_set(state)
  if state == HELD then
    return K_HELD
  elseif state == LEASED then
    return K_LEASED
  elseif state == DEBOUNCING then
    return K_PENDING
  elseif state == RETRYING or state == DEFERRED or state == SCHEDULED then
    return K_DELAYED
  end
end

-- may_be reports whether key may be in state at now, at the cost of one
-- command: false if its state's set does not hold it, or holds it due,
-- and the key is not in multi mode (one command more).
local function may_be(key, now, state)
  local set = state_set(state)
  if not set then
    return true
  end
  local due = rcall('ZSCORE', set, key)
  if due and (state == HELD or tonumber(due) > now) then
    return true
  end
  -- A key in multi mode may be leased while ready, or ready while leased.
  return rcall('SISMEMBER', K_MULTI, key) == 1
end

-- AHEAD_PAUSED bounds the paused keys that ahead looks at: with more
-- paused, ahead counts those that came due and are not set aside yet.
local AHEAD_PAUSED = 1000

-- ahead counts the keys that a Claim would lease before key, ready since
-- since (a string): those before it in the ready order, and those whose
-- burst, delayed batch or lapse came due before since, as promote would
-- place them, but for paused ones; at most most.
local function ahead(key, since, most)
  local before = '(' .. since
  local set = ready_set(PFX .. 'k:' .. key)
  local n = rcall('ZRANK', set, key) or rcall('ZCOUNT', set, '-inf', before)
  for _, k in ipairs({K_PENDING, K_DELAYED, K_LEASED}) do
    n = n + rcall('ZCOUNT', k, '-inf', before)
  end
  if n > 0 and rcall('SCARD', K_PAUSEDKEYS) <= AHEAD_PAUSED then
    local at = tonumber(since)
    for _, p in ipairs(rcall('SMEMBERS', K_PAUSEDKEYS)) do
      for _, k in ipairs({K_READY, K_PENDING, K_DELAYED, K_LEASED}) do
        local due = rcall('ZSCORE', k, p)
        if due then
          if tonumber(due) < at then
            n = n - 1
          end
          break
        end
      end
    end
  end
  return math.min(n, most)
end

-- TURNS_DUE bounds the keys that came due and that no Claim moved into the
-- ready order yet which tenants_ahead looks at, in each of pending,
-- delayed and leased: with more, the tenants of those after the first
-- TURNS_DUE are left out until a Claim moves them.
local TURNS_DUE = 1000

-- tenants_ahead counts the tenants but g, the tenant of key, with hash kk,
-- which is ready at now and not paused, that take their turn before g's
-- next one, as store.KeyInfo.TenantsAhead says, at most most: those with
-- a key in their ready set whose virtual time is lower than g's, or the
-- same with a smaller name. A tenant out of the turns, as g itself may be
-- (a key of it that came due, or the keys without a tenant, join at the
-- next Claim), counts with the virtual time join gives it. It walks the
-- turns up to g's place, one command per tenant (those whose ready set a
-- pause or a drop emptied are passed over, as a Claim passes over them),
-- then looks at the keys without a tenant and at the keys that came due
-- and are not paused (see TURNS_DUE), one or two commands each.
local function tenants_ahead(key, kk, now, most)
  local g = rcall('HGET', kk, 'tn') or ''
  local clock = tonumber(rcall('HGET', K_META, 'tc')) or 0
  -- place returns the virtual time of tenant t: its turn's, or join's.
  local function place(t)
    local v = rcall('ZSCORE', K_TURNS, t)
    if v then
      return tonumber(v), true
    end
    v = tonumber(rcall('HGET', K_TV, t)) or 0
    if clock > v then
      v = clock
    end
    return v, false
  end
  local own = place(g)
  local function before(v, t)
    return v < own or (v == own and bytes_less(t, g))
  end
  local n, seen = 0, {[g] = true}
  local from = 0
  while n < most do
    local r = rcall('ZRANGE', K_TURNS, str(from), str(from + 99), 'WITHSCORES')
    local last = #r < 200
    for i = 1, #r, 2 do
      local t = r[i]
      if t == g or not before(tonumber(r[i + 1]), t) then
        last = true
        break
      end
      if rcall('ZCARD', tenant_set(t)) > 0 then
        seen[t] = true
        n = n + 1
        if n == most then
          return n
        end
      end
    end
    if last then
      break
    end
    from = from + 100
  end
  -- The keys without a tenant join the turns at a Claim.
  if not seen[''] and rcall('ZCARD', K_READY) > 0 then
    seen[''] = true
    local v, turn = place('')
    if not turn and before(v, '') then
      n = n + 1
    end
  end
  -- The tenants of keys that came due join at the Claim that moves them.
  for _, set in ipairs({K_PENDING, K_DELAYED, K_LEASED}) do
    if n >= most then
      break
    end
    local due = rcall('ZRANGE', set, '-inf', str(now), 'BYSCORE', 'LIMIT', '0', str(TURNS_DUE))
    for _, k in ipairs(due) do
      local t = rcall('HGET', PFX .. 'k:' .. k, 'tn') or ''
      if not seen[t] and rcall('SISMEMBER', K_PAUSEDKEYS, k) == 0 then
        seen[t] = true
        if before(place(t), t) then
          n = n + 1
          if n == most then
            break
          end
        end
      end
    end
  end
  return math.min(n, most)
end

-- key_info returns what key is doing at now, if it has values and its
-- state is state (0: any): {key, state, since, until, maxwait, attempt,
-- fence, holder, error, values, oldest, ahead, paused, leases,
-- tenants ahead, for token}, with '' for a time it does not have, paused
-- and for token (store.KeyInfo.ForToken) 1 or 0, and
-- ahead and tenants ahead, with most > 0, for a ready key that is not
-- paused: see ahead and tenants_ahead (0 otherwise); nil otherwise,
-- and then true if key has no values. It reads the time of the key's
-- first value, not the value.
local function key_info(key, now, state, most)
  if state ~= 0 and not may_be(key, now, state) then
    return nil
  end
  local st, since, till, maxwait, holder, err, a, f, leases, token = key_state(key, now)
  if not st then
    return nil, true
  end
  if state ~= 0 and st ~= state then
    return nil
  end
  local vk = PFX .. 'v:' .. key
  local n = rcall('LLEN', vk)
  if n == 0 then
    return nil, true
  end
  local head = rcall('LINDEX', vk, '0')
  local paused, before, tenants = rcall('SISMEMBER', K_PAUSEDKEYS, key), 0, 0
  if most > 0 and st == READY and paused == 0 then
    before = ahead(key, since, most)
    if fair() then
      tenants = tenants_ahead(key, PFX .. 'k:' .. key, now, most)
    end
  end
  if leases < 2 then
    leases = 0 -- as store.KeyInfo.Leases counts them
  end
  return {key, st, since or '', till or '', maxwait, a, f, holder, err, n, stamp(head) or '', before, paused, leases, tenants, token or 0}
end

-- indexed reports whether keys counts as many keys as the state sets,
-- which it does unless keys were added or emptied by a version of the
-- library without it: see reindex.lua.
local function indexed()
  local n = 0
  for _, k in ipairs({K_READY, K_PENDING, K_DELAYED, K_LEASED, K_HELD, K_PARKED}) do
    n = n + rcall('ZCARD', k)
  end
  return n + tenants_ready() == rcall('ZCARD', K_KEYS)
end

-- oldest returns when the oldest value of the first lim keys of the ready
-- order was added, in microseconds, or nil if none is ready.
local function oldest(lim)
  local m
  local keys = rcall('ZRANGE', K_READY, '0', str(lim - 1))
  if fair() then
    -- The first key of each of the first lim tenants in turn.
    for _, g in ipairs(rcall('ZRANGE', K_TURNS, '0', str(lim - 1))) do
      local r = rcall('ZRANGE', tenant_set(g), '0', '0')
      keys[#keys + 1] = r[1]
    end
  end
  for _, key in ipairs(keys) do
    local head = rcall('LINDEX', PFX .. 'v:' .. key, '0')
    local t = head and tonumber(stamp(head))
    if t and (m == nil or t < m) then
      m = t
    end
  end
  return m
end
