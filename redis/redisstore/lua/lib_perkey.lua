--[[
  lib_perkey.lua goes on from lib.lua, in the same library: the steps of a
  key that a Claim with ClaimParams.PerKey > 1 leased, which may have
  several batches out at once (see store.PerKeyClaimer). Such a key is in
  multi mode: its hash has s = m and R, beside b, bf, bd, m, g and f (the
  fence of its last lease) as lib.lua describes them. R packs, with
  struct (see HEAD and RUN), what the key's leases need:
    L   the PerKey of the Claim that leased it last: it takes no new lease
        while that many are out
    P   when it last became eligible or was leased: it is ready at the
        later of P and when its next batch is
    F   when its free values outside the open burst became ready
    E   whether it may take a lease (eligible), as of its last change
    W   the state set its last change put it in (r ready, p parked, l
        leased, d delayed, h held): a hint, as lib.lua moves keys too
        (parking them, promoting them), that spares looking in the others
    H   when it was held, while it is
    its runs, head first: the batches out on a lease or kept to be leased
        again as they are (after a lapse, a Retry, a Defer or a Hold),
        each {n: values, a: attempt of its last lease, u: its next lease
        counts an attempt, o: out on a lease, r: kept after a Retry, f:
        fence, x: out, when its lease lapses, kept, when it is ready
        again, c: when its lease began, h: its holder, e: the error of its
        last Retry or Hold}. The runs hold the first values of the key's
        list, in their order; the free values follow.
  So a call reads the key's state with one HMGET of seven fields and
  writes it with one HSET, whatever its leases: no JSON to decode and
  encode, no field per lease. Beside them, q is the fence of the key's
  last lease (f) if that lease saw a free value after its batch, outside
  the open burst: only a later lease takes such a value, and a later
  lease has another fence, so while q is f the key has free values, and
  a Finish knows it keeps values and may lease again without an LLEN. A
  q of another fence than f (a lease of a version that did not keep it)
  tells nothing. (Keys that an earlier version left in multi
  mode, with R as JSON and L, P, F, E, H as fields of their own, are not
  read: no release wrote them.)
  It is in exactly one of the state sets: held while held; else ready
  (its tenant's ready set, with tenants, each lease taking a turn; or
  parked) once eligible and ready; else leased, scored by the earlier of
  when it is ready and when its first lease lapses, while a lease is out;
  else delayed, until its kept batch is ready. A lease that lapses while
  the key is ready or held is taken back by the next call that loads it.
  The set multi holds the keys in multi mode, for Stats. A key with no
  run left leaves multi mode, a key of lib.lua again, unless it is ready
  and its last lease was of a Claim with PerKey > 1: so a key that such
  Claims lease one batch at a time does not go in and out of multi mode
  with each, and a key that waits (for its burst, its values' Delay)
  waits as lib.lua has it.
  The commonest lease (a key with no run, or never leased, taking a
  batch of its free values) and the commonest Ack (of a key's one run,
  its last lease, with free values behind it) work on R's bytes
  (m_lease_one, m_finish_one): they write what the general steps would,
  without a decoded state, and leave every other case to them.
]]
-- HEAD is the start of R: L, P, F, E, W (a byte: its letter, 0 if none
-- yet) and H (empty if not held); RUN is a run: n and a, a byte of flags
-- (1 u, 2 o, 4 r), then f, x, c, h and e, each a string after its
-- length. P and F are doubles, exact for microseconds since 1970. struct
-- packs and unpacks a run in a fraction of what cjson or cmsgpack take
-- to encode and decode one as a table, and one field costs less to read
-- and write than several. HEAD_RUN is HEAD and one RUN, the same bytes in
-- one pack.
local HEAD = '<i4ddBBi4c0'
local RUN = '<i4i4Bi4c0i4c0i4c0i4c0i4c0'
local HEAD_RUN = '<i4ddBBi4c0i4i4Bi4c0i4c0i4c0i4c0i4c0'

-- m_unpack sets the multi state of k from R, s.
local function m_unpack(k, s)
  local elig, w, held, pos
  k.limit, k.place, k.free_at, elig, w, held, pos = struct.unpack(HEAD, s)
  k.elig = elig == 1
  if w > 0 then
    k.where = string.char(w)
  end
  if held ~= '' then
    k.held = held
  end
  local runs = {}
  while pos <= #s do
    local n, a, fl, f, x, c, h, e
    n, a, fl, f, x, c, h, e, pos = struct.unpack(RUN, s, pos)
    runs[#runs + 1] = {n = n, a = a, u = fl % 2 == 1, o = fl % 4 >= 2, r = fl >= 4, f = f, x = x, c = c, h = h, e = e}
  end
  k.runs = runs
end

-- m_run_fields returns the flags of run r, as R packs them, and sets its
-- strings as m_unpack reads them back (see decoded).
local function m_run_fields(r)
  local fl = 0
  if r.u then
    fl = 1
  end
  if r.o then
    fl = fl + 2
  end
  if r.r then
    fl = fl + 4
  end
  r.f, r.c, r.h, r.e = r.f or '', r.c or '', r.h or '', r.e or ''
  return fl
end

-- m_pack_run returns run r as R packs it.
local function m_pack_run(r)
  local fl = m_run_fields(r)
  local f, c, h, e = r.f, r.c, r.h, r.e
  return struct.pack(RUN, r.n, r.a, fl, #f, f, #r.x, r.x, #c, c, #h, h, #e, e)
end

-- m_pack returns R for k.
local function m_pack(k)
  local elig, w, held = 0, 0, k.held or ''
  if k.elig then
    elig = 1
  end
  if k.where then
    w = string.byte(k.where)
  end
  local runs = k.runs
  -- A key has a run or none most often: then one pack.
  if #runs == 0 then
    return struct.pack(HEAD, k.limit, k.place, k.free_at, elig, w, #held, held)
  elseif #runs == 1 then
    local r = runs[1]
    local fl = m_run_fields(r)
    local f, c, h, e = r.f, r.c, r.h, r.e
    return struct.pack(HEAD_RUN, k.limit, k.place, k.free_at, elig, w, #held, held,
      r.n, r.a, fl, #f, f, #r.x, r.x, #c, c, #h, h, #e, e)
  end
  local out = {struct.pack(HEAD, k.limit, k.place, k.free_at, elig, w, #held, held)}
  for i = 1, #runs do
    out[i + 1] = m_pack_run(runs[i])
  end
  return table.concat(out)
end

-- decoded holds, by the name of a key's hash, the multi state (k) that a
-- call last saved, with R as it wrote it (k.R): the library stays loaded
-- between calls, so the next call on the key, which mostly finds R as it
-- was, takes that table in place of decoding R. R alone decides the
-- state, and m_save writes it from k with k's fields as m_unpack would
-- set them, so a k whose R is the field's R is the state that field
-- holds, whoever wrote it (an older version's call writes another R). A
-- load takes its entry out, so that a call that fails after changing k
-- leaves none; a save puts it back. Past DECODED entries the cache starts
-- over.
local decoded, ndecoded, DECODED = {}, 0, 1024

-- m_load reads the multi state of key at now, or turns a key of lib.lua,
-- ready since ts, into one: its fixed head batch, if any, becomes its
-- first run, kept. h, if the caller read them, holds the key's fields s,
-- R, b, bd, g, f, tn, T and q (R absent with s m: not read; q absent:
-- not read); they spare the read.
local function m_load(key, kk, ts, h)
  if not h then
    h = rcall('HMGET', kk, 's', 'R', 'b', 'bd', 'g', 'f', 'tn', 'T', 'q')
  elseif h[1] == 'm' and not h[2] then
    h[2] = rcall('HGET', kk, 'R')
  end
  local multi = h[1] == 'm'
  local k = multi and decoded[kk]
  if k then
    decoded[kk] = nil
    ndecoded = ndecoded - 1
    if k.R == h[2] then
      -- The hash's other fields may have changed since.
      k.b, k.bd, k.g, k.fence, k.fence0, k.tn, k.T = tonumber(h[3]) or 0, h[4], h[5], h[6], h[6], h[7], h[8]
      k.len, k.more = false, h[9] ~= nil and h[9] == h[6]
      return k
    end
  end
  -- All its fields in one constructor: the table is made at its size
  -- once, not grown field by field.
  local vk = PFX .. 'v:' .. key
  k = {
    key = key, kk = kk, vk = vk, b = tonumber(h[3]) or 0, bd = h[4], g = h[5], fence = h[6], fence0 = h[6],
    tn = h[7], T = h[8], Tw = false, len = false, limit = 1, place = 0, free_at = 0, elig = false, where = false,
    runs = false, held = false, entered = false, R = false, more = false, qw = false, rts = false,
  }
  if multi then
    k.more = h[9] ~= nil and h[9] == h[6]
    m_unpack(k, h[2])
    return k
  end
  -- A hash without s was never leased (every step that writes the
  -- fields of a lease writes s, and none takes s away): none of them.
  local p = h[1] and rcall('HMGET', kk, 'n', 'a', 'u', 'e', 'x', 'c', 'o', 'q') or {}
  k.runs = {}
  local n = tonumber(p[1]) or 0
  if n > 0 then
    k.runs[1] = {n = n, a = tonumber(p[2]) or 0, u = not p[3], o = false, r = false, x = ts, e = p[4] or ''}
  end
  k.limit, k.place, k.free_at = 1, tonumber(ts), tonumber(ts)
  k.elig, k.entered = true, true
  -- Its fields of lib.lua go, but n and a at 0, which mean what their
  -- absence does.
  local gone = {}
  for i, f in ipairs({'n', 'a', 'u', 'e', 'x', 'c', 'o', 'q'}) do
    if p[i] and not (i <= 2 and p[i] == '0') then
      gone[#gone + 1] = f
    end
  end
  if #gone > 0 then
    rcall('HDEL', kk, unpack(gone))
  end
  rcall('SADD', K_MULTI, key)
  feature_on()
  return k
end

-- m_len returns how many values k has, asked of Redis the first time
-- a call needs it: m_lease mostly learns it from the values it reads.
local function m_len(k)
  local n = k.len
  if not n then
    n = rcall('LLEN', k.vk)
    k.len = n
  end
  return n
end

-- m_in_runs returns how many values the runs of k hold.
local function m_in_runs(k)
  local n, runs = 0, k.runs
  for i = 1, #runs do
    n = n + runs[i].n
  end
  return n
end

-- m_out returns how many runs of k are out, and their values.
local function m_out(k)
  local c, n, runs = 0, 0, k.runs
  for i = 1, #runs do
    local r = runs[i]
    if r.o then
      c, n = c + 1, n + r.n
    end
  end
  return c, n
end

-- m_ready returns how many free values of k are outside its open burst.
local function m_ready(k)
  return m_len(k) - m_in_runs(k) - k.b
end

-- m_free reports whether k has free values outside its open burst: known
-- without an LLEN while its last lease saw one (more, from q).
local function m_free(k)
  return k.more or m_ready(k) > 0
end

-- m_eligible reports whether k may take a lease once its next batch is
-- ready.
local function m_eligible(k)
  local c, n = m_out(k)
  return not k.held and c < math.max(k.limit, 1) and (k.more or m_len(k) > n)
end

-- m_track notes, at t, whether k may lease: a key that becomes eligible
-- takes its place then.
local function m_track(k, t)
  local e = m_eligible(k)
  if e and not k.elig then
    k.place = t
  end
  k.elig = e
end

-- m_settle closes the open burst of k once it is due, and takes back the
-- runs whose lease lapsed by now.
local function m_settle(k, now)
  if k.b > 0 and tonumber(k.bd) <= now then
    if not k.more and m_len(k) - m_in_runs(k) == k.b then
      k.free_at = tonumber(k.bd) -- the burst's values are the first free ones
    end
    close_burst(k.kk, k.key)
    k.b = 0
  end
  local first, runs = nil, k.runs
  for i = 1, #runs do
    local r = runs[i]
    if r.o and tonumber(r.x) <= now then
      -- A lapse is the batch's next attempt.
      r.o, r.u, r.r = false, true, false
      local x = tonumber(r.x)
      if first == nil or x < first then
        first = x
      end
    end
  end
  if first then
    m_track(k, first)
  end
end

-- m_kept returns the index of the first run of k that is not out: the
-- batch its next lease takes again; nil if none.
local function m_kept(k)
  local runs = k.runs
  for i = 1, #runs do
    if not runs[i].o then
      return i
    end
  end
  return nil
end

-- m_next returns when the next batch of k is ready: its first kept run's
-- time, else when its free values became ready and the first of them is
-- due, else its burst's due.
local function m_next(k, now)
  local i = m_kept(k)
  if i then
    return tonumber(k.runs[i].x)
  end
  if m_free(k) then
    local t = k.free_at
    if k.g and tonumber(k.g) > now then
      local due = due_of(rcall('LINDEX', k.vk, str(m_in_runs(k))))
      if due and due > t then
        t = due
      end
    end
    return t
  end
  return tonumber(k.bd) or INF
end

-- m_ready_at returns when an eligible k is ready for a lease.
local function m_ready_at(k, now)
  return math.max(k.place, m_next(k, now))
end

-- m_save writes the multi state of k to its hash, and keeps k for the
-- next load (see decoded).
local function m_save(k)
  local R = m_pack(k)
  if not k.Tw and not k.entered and not k.qw and k.fence == k.fence0 then
    rcall('HSET', k.kk, 'R', R) -- the common case, without a table
  elseif not k.Tw and not k.entered then
    -- A lease: its fence, and q if it saw a free value after its batch.
    if k.qw then
      rcall('HSET', k.kk, 'R', R, 'f', k.fence, 'q', k.fence)
    else
      rcall('HSET', k.kk, 'R', R, 'f', k.fence)
    end
    k.fence0, k.qw = k.fence, false
  else
    local set = {'R', R}
    if k.Tw then
      -- A lease moved T (m_lease): it goes in the same HSET.
      set[#set + 1], set[#set + 2] = 'T', k.Tw
      k.T, k.Tw = k.Tw, false
    end
    if k.entered then
      -- It enters multi mode.
      set[#set + 1], set[#set + 2] = 's', 'm'
      k.entered = false
    end
    if k.fence ~= k.fence0 then
      set[#set + 1], set[#set + 2] = 'f', k.fence
      k.fence0 = k.fence
    end
    if k.qw then
      set[#set + 1], set[#set + 2] = 'q', k.fence
      k.qw = false
    end
    rcall('HSET', k.kk, unpack(set))
  end
  -- As m_unpack reads them back.
  k.held = k.held ~= '' and k.held or false
  k.where = k.where or false
  k.R = R
  if not decoded[k.kk] then
    if ndecoded >= DECODED then
      decoded, ndecoded = {}, 0
    end
    ndecoded = ndecoded + 1
  end
  decoded[k.kk] = k
end

-- m_tenant returns the tenant of k whose ready set it stands in: '' for
-- the queue's own. Only a key with a tenant asks whether the queue has
-- tenants.
local function m_tenant(k)
  return k.tn and fair() and k.tn or ''
end

-- m_unset takes k out of the sets of the states it may be in but held
-- (its tenant's ready set, with tenants), and reports whether it was
-- parked. It looks first in the set its hint W names, unless looked says
-- the caller did: a key is in one state set at most, so once found there
-- it is in no other.
local function m_unset(k, looked)
  local key, w = k.key, k.where
  local hinted = ({l = K_LEASED, d = K_DELAYED, p = K_PARKED})[w]
  if w == 'r' then
    hinted = tenant_set(m_tenant(k))
  end
  if hinted and not looked and rcall('ZREM', hinted, key) == 1 then
    return w == 'p'
  end
  rcall('ZREM', tenant_set(m_tenant(k)), key)
  rcall('ZREM', K_LEASED, key)
  rcall('ZREM', K_DELAYED, key)
  return rcall('ZREM', K_PARKED, key) == 1
end

-- m_ready_in puts k in the ready order at ts (its tenant's, with
-- tenants), or among the parked keys if it was there.
local function m_ready_in(k, ts, parked)
  if parked then
    park(k.key, ts)
    return
  end
  enter(k.key, k.kk, ts, m_tenant(k))
  wake()
end

-- m_place saves k and puts it in the set of its state at now (now_s); a k
-- without runs leaves multi mode, as a key of lib.lua that is ready, or
-- settled from now, unless it is ready and its last lease was of a Claim
-- with PerKey > 1: its next lease would bring it back. popped says k is
-- in none of those sets (a Claim popped it from the ready order), which
-- spares looking. A k that stays in the set its hint W names, at the same
-- time, costs one ZSCORE: it is neither taken out nor put back, and wakes
-- no one, as nothing became ready or came due sooner. A ready k that
-- stays where this library's last save of it put it (rts, kept with
-- the decoded state: no call changed R since) costs none: only a pause
-- or its end moves a ready key without a save, and a ready k is then
-- where they left it (parked, or behind the keys ready when it resumed).
local function m_place(k, now, now_s, popped)
  local key, kk = k.key, k.kk
  -- w: the state set its hint says it stands in, if it stands in one.
  local w = not popped and k.where
  -- rts: the time this library's last save of k put it in its ready set
  -- at, a number (times are whole microseconds, so equal numbers print
  -- alike); k.rts is set again where this call puts it there.
  local rts = k.rts
  k.rts = false
  if k.held then
    if not popped then
      m_unset(k)
    end
    k.where = 'h'
    m_save(k)
    rcall('ZADD', K_HELD, 'NX', k.held, key)
    return
  end
  -- When k is ready, if it may lease; idle_at, the same for a k
  -- without runs.
  local ready_at = k.elig and m_ready_at(k, now)
  local idle_at = #k.runs == 0 and ready_at
  if #k.runs == 0 and (k.limit <= 1 or not idle_at or idle_at > now) then
    local parked = not popped and m_unset(k)
    rcall('HDEL', kk, 'R', 'q')
    rcall('SREM', K_MULTI, key)
    if idle_at and idle_at <= now then
      rcall('HSET', kk, 's', 'r', 'a', '0', 'n', '0')
      m_ready_in(k, str(idle_at), parked)
      return
    end
    -- k's b, bd and g are as its hash has them (m_settle dropped b with
    -- the burst it closed).
    local b
    if k.b > 0 then
      b = str(k.b)
    end
    settle(key, kk, m_len(k), now, now_s, b, k.bd, nil, k.g, m_tenant(k))
    return
  end
  local at, looked = INF, false
  if ready_at then
    at = ready_at
    if at <= now then
      if w == 'r' and rts == at then
        k.rts = at
        m_save(k)
        return
      end
      local ts = str(at)
      if w == 'r' or w == 'p' then
        -- Found in the set W names, it is in no other.
        local cur = rcall('ZSCORE', w == 'p' and K_PARKED or tenant_set(m_tenant(k)), key)
        if cur then
          k.rts = w == 'r' and at
          m_save(k)
          if cur ~= ts then
            m_ready_in(k, ts, w == 'p')
          end
          return
        end
        looked = true
      end
      local parked = not popped and m_unset(k, looked)
      k.where = parked and 'p' or 'r'
      k.rts = not parked and at
      m_save(k)
      m_ready_in(k, ts, parked)
      return
    end
  end
  local set, to = K_DELAYED, 'd'
  if m_out(k) > 0 then
    local runs = k.runs
    for i = 1, #runs do
      local r = runs[i]
      if r.o and tonumber(r.x) < at then
        at = tonumber(r.x)
      end
    end
    set, to = K_LEASED, 'l'
  end
  local ts = str(at)
  if w == to then
    local cur = rcall('ZSCORE', set, key)
    if cur then
      m_save(k)
      if cur ~= ts then
        wake_before(at)
        rcall('ZADD', set, ts, key)
      end
      return
    end
    looked = true
  end
  if not popped then
    m_unset(k, looked)
  end
  k.where = to
  m_save(k)
  wake_before(at)
  rcall('ZADD', set, ts, key)
end

-- m_delete removes k, which has no values left, for a call that runs
-- flush_ends before it claims or returns.
local function m_delete(k)
  local key, kk = k.key, k.kk
  m_unset(k)
  spill(key, k.T)
  rcall('DEL', kk, k.vk)
  unindexed[#unindexed + 1] = key
  -- Only a held key is in held, and only one with an open burst in
  -- trailing.
  if k.held then
    rcall('ZREM', K_HELD, key)
  end
  if k.b > 0 then
    rcall('ZREM', K_TRAILING, key)
  end
  rcall('SREM', K_MULTI, key)
end

-- m_offset returns the index in the key's list of the first value of run i.
local function m_offset(k, i)
  local off = 0
  for j = 1, i - 1 do
    off = off + k.runs[j].n
  end
  return off
end

-- m_cut removes the n values of k's list from off on.
local function m_cut(k, off, n)
  if off == 0 then
    rcall('LTRIM', k.vk, str(n), '-1')
    return
  end
  local before = rcall('LRANGE', k.vk, '0', str(off - 1))
  rcall('LTRIM', k.vk, str(off + n), '-1')
  local rev = {}
  for i = #before, 1, -1 do
    rev[#rev + 1] = before[i]
  end
  rcall('LPUSH', k.vk, unpack(rev))
end

-- HEAD_LEN is the length of HEAD with no hold (H empty): a key's R with
-- no run is that long.
local HEAD_LEN = 26

-- placed holds, by the name of a key's hash, the R that m_lease_one
-- wrote when it put the key in its ready set: while the hash's R is that
-- one, the key stands there, as decoded's rts tells for m_place (only a
-- pause or its end moves a ready key without a save). Past DECODED
-- entries it starts over.
local placed, nplaced = {}, 0

-- m_forget drops what decoded and placed keep of the key with hash kk,
-- whose R a call is about to write without them.
local function m_forget(kk)
  if decoded[kk] then
    decoded[kk] = nil
    ndecoded = ndecoded - 1
  end
  if placed[kk] then
    placed[kk] = nil
    nplaced = nplaced - 1
  end
end

-- m_lease_one is m_lease of the commonest lease of a key, on R's bytes,
-- without the decoded state: a key in multi mode with no run, or a key
-- never leased (no s), ready since ts, that enters it; with no open
-- burst, no value added with a Delay, not held and eligible, leased for
-- a maxbatch by a Claim without a KeyRate, whose free values have been
-- ready since no later than after. It writes what m_lease would write
-- (the same R, s, f, q; the key back in its ready set at after if it may
-- lease again, else in leased until its lease lapses), and returns the
-- lease's attempt and values; nil, having changed nothing, if the key is
-- not such a key. h holds the fields m_load reads.
local function m_lease_one(key, kk, h, ts, now_s, fence, maxbatch, exp, holder, perkey, after)
  local R = h[2]
  if h[3] or h[5] or maxbatch <= 0 or rate_i > 0 then
    return nil
  end
  local place, free_at, elig, entering, _
  if h[1] == 'm' and R and #R == HEAD_LEN then
    _, place, free_at, elig = struct.unpack(HEAD, R)
  elseif not h[1] and not R then
    -- As m_load makes it: ready since ts, eligible.
    place, free_at, elig, entering = tonumber(ts), tonumber(ts), 1, true
  else
    return nil
  end
  if elig ~= 1 or free_at > after then
    return nil
  end
  local vk = PFX .. 'v:' .. key
  local vals = rcall('LRANGE', vk, '0', str(maxbatch))
  local n, more = #vals, false
  if n == 0 then
    return nil
  end
  if n > maxbatch then
    n, more = maxbatch, true
    vals[n + 1] = nil
  end
  local limit = math.max(perkey, 1)
  local f = str(fence)
  m_forget(kk)
  if entering then
    rcall('SADD', K_MULTI, key)
    feature_on()
  end
  if limit > 1 and more then
    -- Eligible again at once: from after, in its ready set.
    R = struct.pack(HEAD_RUN, limit, after, free_at, 1, 114, 0, '',
      n, 1, 2, #f, f, #exp, exp, #now_s, now_s, #holder, holder, 0, '')
    if entering then
      rcall('HSET', kk, 'R', R, 's', 'm', 'f', f, 'q', f)
    else
      rcall('HSET', kk, 'R', R, 'f', f, 'q', f)
    end
    if nplaced >= DECODED then
      placed, nplaced = {}, 0
    end
    placed[kk], nplaced = R, nplaced + 1
    enter(key, kk, str(after), h[7] and fair() and h[7] or '')
    wake()
    return 1, vals
  end
  R = struct.pack(HEAD_RUN, limit, place, free_at, 0, 108, 0, '',
    n, 1, 2, #f, f, #exp, exp, #now_s, now_s, #holder, holder, 0, '')
  if entering and more then
    rcall('HSET', kk, 'R', R, 's', 'm', 'f', f, 'q', f)
  elseif entering then
    rcall('HSET', kk, 'R', R, 's', 'm', 'f', f)
  elseif more then
    rcall('HSET', kk, 'R', R, 'f', f, 'q', f)
  else
    rcall('HSET', kk, 'R', R, 'f', f)
  end
  wake_before(tonumber(exp))
  rcall('ZADD', K_LEASED, exp, key)
  return 1, vals
end

-- m_finish_one is m_finish of the commonest Ack of a key in multi mode,
-- on R's bytes: the key's one run, out on the lease with fence, which is
-- its last (f) and saw a free value after its batch (q), with no open
-- burst, no value added with a Delay, not held, eligible and ready (W r)
-- where its place puts it. It writes what m_finish would (R without the
-- run, the run's values cut) and returns true; false, having changed
-- nothing, if the lease is not such a lease. h holds the fields m_load
-- reads.
local function m_finish_one(key, kk, fence, now, h)
  local R = h[2]
  if not R or h[6] ~= fence or h[9] ~= fence or h[3] or h[5] or #R <= HEAD_LEN then
    return false
  end
  local limit, place, free_at, elig, w, held, n, _, fl, f, x, pos = struct.unpack('<i4ddBBi4c0i4i4Bi4c0i4c0', R)
  if held ~= '' or elig ~= 1 or w ~= 114 or limit <= 1 or fl ~= 2 or f ~= fence or tonumber(x) <= now then
    return false
  end
  -- The rest of the run (c, h, e), and nothing after it.
  local _, _, _, rest = struct.unpack('<i4c0i4c0i4c0', R, pos)
  if rest ~= #R + 1 then
    return false
  end
  local at = math.max(place, free_at)
  if at > now then
    return false
  end
  local head = string.sub(R, 1, HEAD_LEN)
  -- Where the last save put it, as m_place knows by rts.
  local d = decoded[kk]
  if placed[kk] ~= R and not (d and d.R == R and d.rts == at) then
    local cur = rcall('ZSCORE', tenant_set(h[7] and fair() and h[7] or ''), key)
    if not cur or tonumber(cur) ~= at then
      return false
    end
  end
  m_forget(kk)
  unstored = unstored + n -- flush_ends takes them off meta's v
  rcall('LTRIM', PFX .. 'v:' .. key, str(n), '-1')
  rcall('HSET', kk, 'R', head)
  return true
end

-- m_lease leases key, popped from the ready order where it stood since ts,
-- at now (now_s) with fence, for the Claim's maxbatch, lapse exp, holder
-- and perkey, if it is ready: its first kept run again, or else a new run
-- of its free values. It returns the lease's attempt and values, or nil,
-- and places the key; a key that may lease again is ready from after,
-- now or the microseconds after it, so that the keys one call leases go
-- back in the order it leased them. h, if the caller read them, holds
-- the fields m_load takes; with a KeyRate, the lease takes a token.
m_lease = function(key, kk, ts, now, now_s, fence, maxbatch, exp, holder, perkey, after, h)
  if not h then
    h = rcall('HMGET', kk, 's', 'R', 'b', 'bd', 'g', 'f', 'tn', 'T', 'q')
  end
  local a, vals = m_lease_one(key, kk, h, ts, now_s, fence, maxbatch, exp, holder, perkey, after)
  if a then
    return a, vals
  end
  local k = m_load(key, kk, ts, h)
  m_settle(k, now)
  -- Ready, as it was in the ready order (perhaps from a microsecond or so
  -- after now: see after), if it may lease.
  if not k.elig then
    m_place(k, now, now_s, true)
    return nil
  end
  local i, vals, more = m_kept(k), nil, false
  if not i then
    local off, n = m_in_runs(k), nil
    if not k.len and k.b == 0 and maxbatch > 0 and not k.g then
      -- The free values from off on: one LRANGE, up to one value past
      -- the most the batch takes, tells what LLEN would here, the
      -- batch and whether values follow it. The key's length is then
      -- known, or, if values follow, known to be more than its runs
      -- hold with this batch, which is all this call asks (m_eligible,
      -- m_ready).
      vals = rcall('LRANGE', k.vk, str(off), str(off + maxbatch))
      k.len, n = off + #vals, #vals
      if n > maxbatch then
        n = maxbatch
        vals[n + 1] = nil
        -- A free value follows the batch: q keeps it for the Finish.
        more = true
      end
    else
      n = m_ready(k)
      if maxbatch > 0 and n > maxbatch then
        n = maxbatch
      end
    end
    if k.g and n > 0 then
      if tonumber(k.g) <= now then
        rcall('HDEL', kk, 'g')
        k.g = nil
      else
        local vals = rcall('LRANGE', k.vk, str(off), str(off + n - 1))
        for j = 1, #vals do
          local due = due_of(vals[j])
          if due and due > now then
            n = j - 1
            break
          end
        end
      end
    end
    if n <= 0 then
      m_place(k, now, now_s, true)
      return nil
    end
    -- All its fields at once: the table is made at its size.
    k.runs[#k.runs + 1] = {n = n, a = 0, u = true, o = false, r = false, f = '', x = now_s, c = '', h = '', e = ''}
    i = #k.runs
  end
  local r = k.runs[i]
  if r.u then
    r.a = r.a + 1
    r.u = false
  end
  local f = str(fence)
  r.o, r.r, r.f, r.x, r.c, r.h = true, false, f, exp, now_s, holder
  -- A new fence: what q told of the last one no longer holds.
  k.limit, k.elig, k.fence, k.more, k.qw = math.max(perkey, 1), false, f, more, more
  if rate_i > 0 then
    k.Tw = rate_take(key)
  end
  if not vals then
    local off = m_offset(k, i)
    vals = rcall('LRANGE', k.vk, str(off), str(off + r.n - 1))
  end
  -- A key that may lease again goes behind those waiting.
  m_track(k, after)
  m_place(k, after, str(after), true)
  return r.a, vals
end

-- m_defer defers key in multi mode, popped from the ready order at now
-- (now_s) without a token of the Claim's KeyRate, until due, when its
-- token is (see rate_defer): it is ready no sooner. A key with no run
-- left leaves multi mode, deferred as a key of lib.lua (s d in delayed).
m_defer = function(key, kk, due, now, now_s)
  local k = m_load(key, kk, now_s)
  m_settle(k, now)
  if #k.runs == 0 and k.elig and m_free(k) then
    rcall('HDEL', kk, 'R', 'q')
    rcall('SREM', K_MULTI, key)
    local due_s = str(due)
    rcall('HSET', kk, 's', 'd', 'a', '0', 'n', '0', 'K', due_s)
    rcall('ZADD', K_DELAYED, due_s, key)
    return
  end
  if k.elig and k.place < due then
    k.place = due
  end
  m_place(k, now, now_s, true)
end

-- m_find returns k's run out on the lease with fence, which holds at now,
-- and its index; nil if none.
local function m_find(k, fence)
  local runs = k.runs
  for i = 1, #runs do
    local r = runs[i]
    if r.o and r.f == fence then
      return r, i
    end
  end
  return nil
end

-- m_finish ends the lease of key with fence as finish_lease does, for a
-- key in multi mode.
m_finish = function(key, kk, fence, kind, after, why, now, now_s, h)
  if kind == 1 and m_finish_one(key, kk, fence, now, h) then
    return 1
  end
  local k = m_load(key, kk, now_s, h)
  m_settle(k, now)
  local r, i = m_find(k, fence)
  if not r then
    return -1
  end
  if kind == 1 or kind == 2 then
    local off = m_offset(k, i)
    if kind == 2 then
      local id = rcall('HINCRBY', K_META, 'd', '1')
      local dk = PFX .. 'd:' .. id
      rcall('RPUSH', dk, key, why, str(r.a), now_s)
      rcall('RPUSH', dk, unpack(rcall('LRANGE', k.vk, str(off), str(off + r.n - 1))))
      rcall('ZADD', K_DEAD, id, id)
      rcall('ZADD', K_DEADAT, now_s, id)
    end
    unstored = unstored + r.n -- flush_ends takes them off meta's v
    if k.more then
      k.len = k.len and k.len - r.n
    else
      k.len = m_len(k) - r.n
      if k.len == 0 then
        m_delete(k)
        return 0
      end
    end
    m_cut(k, off, r.n)
    table.remove(k.runs, i)
  elseif kind == 5 then
    r.o, r.e = false, why
    k.held = now_s
  else
    -- A retry counts an attempt, a defer does not.
    r.o, r.r, r.u = false, kind == 3, kind == 3
    if kind == 3 then
      r.e = why
    end
    r.x = str(deadline(now, after))
  end
  m_track(k, now)
  m_place(k, now, now_s)
  return 1
end

-- m_extend renews the lease of key with fence for ttl from now, for a key
-- in multi mode: 1, or 0 if it lapsed or ended.
m_extend = function(key, kk, fence, ttl, now, now_s)
  local k = m_load(key, kk, now_s)
  m_settle(k, now)
  local r = m_find(k, fence)
  if not r then
    return 0
  end
  r.x = str(deadline(now, ttl))
  m_place(k, now, now_s)
  return 1
end

-- m_due places key in multi mode, whose entry in a set of keys that come
-- due came due at ts.
m_due = function(key, kk, ts)
  local now = tonumber(ts)
  local k = m_load(key, kk, ts)
  m_settle(k, now)
  m_place(k, now, ts, true) -- promote took it out of the set it came due in
end

-- m_added places key in multi mode after an Add of n values at t (ts),
-- its open burst having been b0 values due at bd0 before (fields of its
-- hash, or nil).
m_added = function(key, kk, n, t, ts, b0, bd0)
  local k = m_load(key, kk, ts)
  -- Whether free values were ready before the Add, once a burst that
  -- came due by t was closed.
  local len0, inr = m_len(k) - n, m_in_runs(k)
  b0 = tonumber(b0) or 0
  if b0 > 0 and tonumber(bd0) <= t then
    if len0 - inr == b0 then
      k.free_at = tonumber(bd0)
    end
    b0 = 0
  end
  local was = len0 - inr - b0 > 0
  m_settle(k, t)
  if not was and m_ready(k) > 0 then
    k.free_at = t
  end
  m_track(k, t)
  m_place(k, t, ts)
end

-- m_release ends the hold of key in multi mode at now: the attempts of
-- its kept runs start over, and those behind its last lease out give up
-- their size. It returns 1, or 0 if the key is not held.
m_release = function(key, kk, now, now_s)
  local k = m_load(key, kk, now_s)
  if not k.held then
    return 0
  end
  rcall('ZREM', K_HELD, key)
  m_settle(k, now)
  k.held = nil
  local last = 0
  for i, r in ipairs(k.runs) do
    if r.o then
      last = i
    end
  end
  if #k.runs > last then
    if m_ready(k) == 0 then
      k.free_at = now
    end
    for i = #k.runs, last + 1, -1 do
      table.remove(k.runs, i)
    end
  end
  for _, r in ipairs(k.runs) do
    if not r.o then
      r.a, r.u, r.r, r.e, r.x = 0, true, false, '', now_s
    end
  end
  m_track(k, now)
  m_place(k, now, now_s)
  return 1
end

-- m_counts returns what Stats counts of key in multi mode at now: its
-- leases out, and whether its first run was kept after a Retry, with the
-- values behind it.
local function m_counts(key, now, now_s)
  local k = m_load(key, PFX .. 'k:' .. key, now_s)
  m_settle(k, now)
  local c = m_out(k)
  local first = k.runs[1]
  if first and first.r and not first.o then
    return c, true, m_len(k) - first.n
  end
  return c, false, 0
end

-- m_state returns what key in multi mode is doing at now, as key_state
-- does for others (see lib_inspect.lua), and its leases out: the state
-- (2 ready, 3 leased, 4 retrying, 5 held, 6 deferred, 7 scheduled, 1
-- debouncing), since, until, maxwait, holder, error, attempt and fence,
-- of the first run out on a lease if it is leased, else of its first
-- kept run.
local function m_state(key, now, now_s)
  local k = m_load(key, PFX .. 'k:' .. key, now_s)
  m_settle(k, now)
  local c = m_out(k)
  local shown
  if c > 0 and not k.held then
    for _, r in ipairs(k.runs) do
      if r.o then
        shown = r
        break
      end
    end
  end
  local i = m_kept(k)
  if not shown and i then
    shown = k.runs[i]
  end
  local a, e = 0, ''
  if shown then
    a, e = shown.a, shown.e or ''
  end
  local f = tonumber(k.fence) or 0
  if k.held then
    return 5, k.held, false, 0, '', e, a, f, c
  elseif c > 0 then
    return 3, shown.c, shown.x, 0, shown.h or '', e, a, tonumber(shown.f), c
  end
  local at = m_ready_at(k, now)
  if k.elig and at <= now then
    return 2, str(at), false, 0, '', e, a, f, c
  elseif i and k.runs[1].r then
    return 4, false, str(at), 0, '', e, a, f, c
  elseif i then
    return 6, false, str(at), 0, '', e, a, f, c
  elseif m_ready(k) > 0 then
    return 7, false, str(at), 0, '', e, a, f, c
  end
  local mw = 0
  if rcall('HGET', k.kk, 'm') == '1' then
    mw = 1
  end
  return 1, false, str(at), mw, '', e, a, f, c
end

-- m_retry_now makes the kept batch of key in multi mode ready at now, if
-- the key is retrying or deferred: 1, else 0.
local function m_retry_now(key, kk, now, now_s)
  local st = m_state(key, now, now_s)
  if st ~= 4 and st ~= 6 then
    return 0
  end
  local k = m_load(key, kk, now_s)
  m_settle(k, now)
  k.runs[m_kept(k)].x = now_s
  m_place(k, now, now_s)
  return 1
end
