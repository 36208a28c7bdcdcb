--[[
  lib.lua opens the package's Redis function library: the other scripts
  become its functions (see scripts.go), each a function of KEYS and ARGV
  whose "-- @include lib.lua" line calls begin. It names the queue's keys
  and holds the steps that several scripts share; the library runs it
  once, when it is loaded, so a call does not define its steps again.
  lib_inspect.lua follows it, with the steps of the inspection functions.

  ARGV[1] of every function is the prefix of the queue's names,
  "{prefix:queue}:" with ":" and "%" escaped in prefix and queue (the name
  encoding of the package doc); every name starts with it, so all are in
  one hash slot of Redis Cluster. A function declares in KEYS the names of
  its common path only; the others it builds from ARGV[1]. The queue's keys:
    ready     ZSET  key -> when it became ready; leased lowest first
    pending   ZSET  key -> when its burst is due, for keys with nothing but
                    an open burst
    trailing  ZSET  key -> when its burst is due, for keys with an open
                    burst behind other values; a burst here that came due is
                    closed by the next script that looks at the key
    delayed   ZSET  key -> when its retried or deferred batch is due, or
                    its first value, added with a Delay (s w)
    leased    ZSET  key -> when its lease lapses
    held      ZSET  key -> when it was held
    parked    ZSET  key -> when it became ready, for paused keys set aside
                    from the ready order (see pausedkeys)
    keys      ZSET  every key with values, each scored 0, so ordered by its
                    bytes: the index that the inspection functions page
                    through (ZRANGE BYLEX)
    meta      HASH  f: last fence, v: values stored (those of the inbox
                    included: add.lua counts them), d: last dead letter id
    paused    STRING "1" while an operator paused the queue (pausequeue.lua):
                    claim_ready leases nothing
    pausedkeys SET  the keys an operator paused (pausekey.lua), with values
                    or not: a paused key that comes ready, by any path, is
                    moved to parked by the next Claim that pops it, or by
                    pausekey.lua if it is ready then, until resumekey.lua
    wake      ZSET  at most one member, popped by a waiting worker
    multi     SET   the keys in multi mode, which a Claim with PerKey > 1
                    leased and which may have several leases out (see
                    lib_perkey.lua)
    features  ZSET  one member, "on", while the queue may be paused, have
                    paused keys, tenants or keys in multi mode: each
                    step that creates paused, pausedkeys, tweights or
                    multi adds it in the same call, and only a Claim that
                    finds none of the four removes it. A Claim pops it
                    with ready in one ZMPOP, so that a queue using none
                    of these costs the Claim no command to find out
                    (claim_ready)
    rates     ZSET  key -> T, its theoretical arrival time (store.KeyRate),
                    for keys whose hash went while T had not passed (see
                    the hash's T): a key with neither has a full bucket,
                    as has one whose T passed. An entry that passed 10 s
                    ago or more goes with the next call that adds one
                    (flush_adds), and the whole set a day and 10 s after
                    the last call that wrote it. A Claim without a
                    KeyRate, and the scripts of versions before it,
                    neither read it nor write it
    dead      ZSET  dead letter id -> id
    deadat    ZSET  dead letter id -> when it was dropped
    inbox     LIST  the Adds not yet folded into their keys, oldest first:
                    each is the seconds and microseconds of the server's
                    TIME when it ran, its params ("<count>" with a Wait of
                    0 and no tenant, "<count> @<delay>" with a Delay,
                    else "<count> <wait> <maxwait>"; then " <weight>
                    <tenant>" with a tenant but for the first form), its
                    key, then its values
  and, once an Add named a tenant (store.AddParams.Tenant):
    tweights  HASH  tenant -> its weight; it exists once an Add named a
                    tenant, which turns the queue's tenants on (fair)
    turns     ZSET  tenant -> its virtual time, for the tenants with ready
                    keys (and some whose ready keys a pause or a drop
                    took, which the next Claim removes); "" is the keys
                    without a tenant, whose ready set is ready itself, and
                    which the Claim adds when ready has keys
    tvtimes   HASH  tenant -> its virtual time, kept when it leaves turns
    r:<tenant> ZSET key -> when it became ready: the ready order of a
                    tenant's keys, in place of ready
    meta's tc is the queue's virtual clock: the virtual time of the last
    tenant served. A key of a tenant has its hash from its first value on,
    with tn, its tenant. Every place a key enters the ready order (enter)
    puts it in its tenant's set and gives the tenant a turn (join) if it
    had none, from the larger of its own virtual time and the clock; a
    Claim takes the tenant with the smallest virtual time (ties to the
    smaller name), pops its oldest ready key and advances it by 1/weight.
    A queue without tweights does none of this; without features, its
    Claim does not even ask.

  Add only appends to the inbox (add.lua). Every other function that
  reads or changes the keys' values or state first folds the inbox (fold):
  each Add is applied as it would have been at its own time, so that the
  order, the debounce and the counts are those of Adds applied at once. A
  fold does at most FOLD elements' worth of Adds; a function that finds
  more left returns FOLDING before doing anything else, and the caller
  calls it again.

  A key of the queue is in exactly one of ready, pending, delayed, leased,
  held and parked while it has values (and in trailing too while an open
  burst waits behind its head), or in the inbox only; and in keys, from
  the fold that gives it its first value to the call that takes its last,
  so keys counts as many members as the other six together. A parked key
  keeps the hash of a ready one (s r or absent). It has two more names:
  ARGV[1].."v:"..key, the LIST of its values, and ARGV[1].."k:"..key, a
  HASH with
    s   state: r (or absent) ready, p pending, l leased, t retrying,
        d deferred, h held, w scheduled (its first value waits for its
        time)
    f   fence of its last lease
    x   when that lease lapses
    a   the attempt of its head batch's last lease (absent: 0)
    u   1 if that lease was deferred, which is no attempt: the next lease
        takes its number (absent: not deferred)
    n   size of its head batch once a lease fixed it (absent or 0: not
        fixed)
    c   when its last lease was taken
    o   the holder that took it (ClaimParams.Holder)
    q   the fence of that lease if it saw a value after its batch that
        no burst held, which stays until the lease ends: its Finish knows
        the key keeps values without an LLEN; 0 if not. A q of another
        fence than f (a lease taken by scripts that did not keep q)
        tells nothing. A key in multi mode keeps it for its last lease
        alone (see lib_perkey.lua)
    e   the error of the last retry or hold of its head batch (Outcome.Err)
    b   values at the tail in an open burst (absent: no open burst)
    tn  its tenant (absent: none)
    bf  when that burst began, bd when it is due
    m   1 if bd is the burst's MaxWait deadline, 0 if its quiet period's end
    g   the latest time a value of the key added with a Delay is due
        (absent: none was); once it passed, no value waits for its time,
        and the scripts drop it when they come across it
    K   when its token is due, if a Claim deferred it for its token (s d):
        while delayed has it at K, Inspector tells it (ForToken)
    T   the key's theoretical arrival time, which a Claim with a KeyRate
        (store.KeyRate) moves as it leases the key: its bucket, in the
        HSET of the lease, read with the key's other fields (absent: look
        in rates). A call that deletes the hash before T passed keeps T in
        rates, so that the key finds it when it gets values again (the
        scripts of versions before it delete it with the hash: the key's
        bucket is then full)
  Both go when the key has no values left; a key that was only ever ready
  has no HASH. A dead letter is the LIST ARGV[1].."d:"..id: key, error,
  attempt, time, then the values.

  Times are whole microseconds of the server's clock (TIME), kept as
  decimal strings; a duration of -1 is for ever, and so is a time of inf.
  Each value is stored as "<time added>:<value>", or, added with a Delay,
  "<time added>@<time due>:<value>". A key's values keep their order: a
  lease takes the values from the head up to the first that is not due,
  and a key whose first value is not due is scheduled (w) in delayed
  until it is. Only a key with g looks at its values' times, so values
  without a Delay cost what they did. The scripts pass
  strings, not numbers, to redis.call where they can: Redis 7.0 formats a
  number argument with printf's %.17g, which costs more than the command.
]]
local rcall -- redis.call, which a library cannot reach while it loads
local INF = 1 / 0 -- math.huge: a library cannot reach math while it loads
local FOLDING = {ok = 'FOLDING'}
local ZEROS = {'00000', '0000', '000', '00', '0', ''}

-- at returns the time of TIME's reply, or of an Add, from its seconds
-- and microseconds: as a number, and as the string the scripts store.
local function at(sec, usec)
  local s = sec .. ZEROS[#usec] .. usec
  return tonumber(s), s
end

-- call_now is the now of the call, once it asked clock.
local call_now = 0

local function clock()
  local t = rcall('TIME')
  local now, now_s = at(t[1], t[2])
  call_now = now
  return now, now_s
end

-- DIGITS holds the strings of the counts 0 to 1023, made once, when the
-- library loads: a count's string is then a lookup, not a format.
local DIGITS = {}
for i = 0, 1023 do
  DIGITS[i] = '' .. i
end

-- str_n and str_s are the last number str formatted and its string: a
-- call often formats the same time several times.
local str_n, str_s

-- str is a time or count as the scripts store it.
local function str(n)
  local s = DIGITS[n]
  if s then
    return s
  end
  if n == str_n then
    return str_s
  end
  if n == INF then
    return 'inf'
  end
  s = string.format('%d', n)
  str_n, str_s = n, s
  return s
end

-- deadline is now+d, with d -1 for ever.
local function deadline(now, d)
  if d < 0 then
    return INF
  end
  return now + d
end

-- burst_due is when a burst that began at first is due after an Add at now
-- with Wait wait and MaxWait maxwait (0: no bound), and the field m: '1' if
-- MaxWait sets it, '0' if the quiet period does.
local function burst_due(now, first, wait, maxwait)
  local due = deadline(now, wait)
  if maxwait > 0 and first + maxwait < due then
    return first + maxwait, '1'
  end
  return due, '0'
end

-- The names of the queue a call works on, and whether it woke a worker:
-- set by begin, as Redis runs one call at a time.
local PFX, K_READY, K_PENDING, K_TRAILING, K_DELAYED, K_LEASED, K_HELD
local K_KEYS, K_META, K_WAKE, K_DEAD, K_DEADAT, K_INBOX
local K_PARKED, K_PAUSED, K_PAUSEDKEYS, K_MULTI, K_FEATURES
local K_TW, K_TURNS, K_TV, K_RATES
-- The names claim_ready passes to EXISTS to learn which features the
-- queue has (see feature_names), for the queue whose prefix is
-- NAMES_PFX.
local FEATURE_NAMES, PERKEY_NAMES, FAIR_NAMES, NAMES_PFX
local woken
local featq -- whether the queue has features; nil until a step asks
local features_popped -- whether pop_plain popped the features key
local fairq -- whether the queue has tenants; nil until a step asks
-- unlist_keep holds the queue (its prefix) whose turns unlist last found
-- or left in the skiplist encoding, and how many more calls on it go
-- without asking again (see unlist).
local unlist_keep = {}
local unlisted -- whether this call ran unlist, or had no need to
-- The parts of the ends of leases that finish_lease leaves to flush_ends,
-- one command each for all the leases a call ends: the keys to take out
-- of leased, those to take out of keys (they have no values left), and
-- how many values to take off meta's v.
local unleased, unindexed, unstored = {}, {}, 0
-- While deferring, the keys that enter ready without a tenant, and the
-- new keys of keys, wait in readied and indexed (score, member, ...) for
-- flush_adds, one ZADD each for all of them: a fold, and finish_lease's
-- keys that stay, defer them, as nothing reads ready or keys before the
-- flush.
local readied, indexed, deferring = {}, {}, false
-- While claim_ready leases keys it popped, which it ends by waking a
-- worker (if a key is ready or one comes due), wake_before leaves that to
-- it.
local claiming = false

-- The steps of a key in multi mode (s m), which lib_perkey.lua defines.
local m_lease, m_finish, m_extend, m_due, m_added, m_release, m_defer

-- The KeyRate of the call's Claim (rate_begin): its Interval (0: off)
-- and tolerance, (Burst-1)*Interval, in microseconds, and the Claim's now.
local rate_i, rate_tol, rate_now, rate_now_s = 0, 0, 0, nil
-- rate_t holds T of the keys the Claim looked up (false: none), rate_h
-- the fields it read of each (rate_read), for its lease; rate_left is how
-- many keys it may still defer, rate_full whether it ran out, and
-- rate_fields the fields rate_read reads.
local rate_t, rate_h, rate_left, rate_full, rate_fields
-- The T of keys whose hash a call deleted before T passed, with the keys,
-- for flush_adds to keep in rates.
local spilled = {}

-- begin starts a call on the queue whose names start with prefix. The
-- names stay from the call before when it was on the same queue: most
-- calls are.
local function begin(prefix)
  rcall = redis.call
  woken = false
  featq, fairq, features_popped = nil, nil, false
  unlisted = false
  if #unleased > 0 or #unindexed > 0 then
    -- Left by a call that failed before it flushed them.
    unleased, unindexed = {}, {}
  end
  unstored = 0
  if unlist_keep[1] == prefix and unlist_keep[2] > 0 then
    unlist_keep[2] = unlist_keep[2] - 1
    unlisted = true
  end
  if #readied > 0 or #indexed > 0 then
    readied, indexed = {}, {}
  end
  deferring, claiming = false, false
  rate_i, rate_full = 0, false
  if #spilled > 0 then
    spilled = {}
  end
  if prefix == PFX then
    return
  end
  PFX = prefix
  K_READY, K_PENDING, K_TRAILING = PFX .. 'ready', PFX .. 'pending', PFX .. 'trailing'
  K_DELAYED, K_LEASED, K_HELD = PFX .. 'delayed', PFX .. 'leased', PFX .. 'held'
  K_KEYS = PFX .. 'keys'
  K_META, K_WAKE, K_DEAD, K_DEADAT = PFX .. 'meta', PFX .. 'wake', PFX .. 'dead', PFX .. 'deadat'
  K_INBOX = PFX .. 'inbox'
  K_PARKED, K_PAUSED, K_PAUSEDKEYS = PFX .. 'parked', PFX .. 'paused', PFX .. 'pausedkeys'
  K_MULTI, K_FEATURES = PFX .. 'multi', PFX .. 'features'
  K_TW, K_TURNS, K_TV = PFX .. 'tweights', PFX .. 'turns', PFX .. 'tvtimes'
  K_RATES = PFX .. 'rates'
end

-- wake lets one waiting worker return from its blocking pop. Once per
-- call is enough: the member is the same, and no function pops it.
local function wake()
  if not woken then
    woken = true
    rcall('ZADD', K_WAKE, '0', 'w')
  end
end

-- DEFER bounds the elements readied or indexed hold, which unpack passes
-- to one ZADD.
local DEFER = 4000

-- RATE_KEEP is how long rates keeps an entry after its T passed, in
-- microseconds: a key that empties again within it finds its entry, which
-- its ZADD then moves, and no sweep is due.
local RATE_KEEP = 10000000

-- spill keeps T, a key's hash's field, in rates, as the call deletes the
-- hash, if T has not passed (flush_adds writes it).
local function spill(key, T)
  if T and tonumber(T) > call_now then
    spilled[#spilled + 1] = T
    spilled[#spilled + 1] = key
  end
end

-- RATE_LIFE_S is how long rates outlives the last call that wrote it, in
-- milliseconds: store.MaxKeyRateSpan, which no T is further ahead of the
-- time it was written, and RATE_KEEP; so a queue that stops using
-- KeyRate leaves no rates behind.
local RATE_LIFE_S = '86410000'

-- flush_adds applies the ZADDs deferred to it. One that adds keys to
-- rates removes its entries that passed RATE_KEEP ago or more: so rates
-- holds the keys whose hash went within Burst*Interval + RATE_KEEP of the
-- last call that added one, and no more.
local function flush_adds()
  if #spilled > 0 then
    if rcall('ZADD', K_RATES, unpack(spilled)) > 0 then
      rcall('ZREMRANGEBYSCORE', K_RATES, '-inf', str(call_now - RATE_KEEP))
    end
    rcall('PEXPIRE', K_RATES, RATE_LIFE_S)
    spilled = {}
  end
  if #readied > 0 then
    rcall('ZADD', K_READY, unpack(readied))
    readied = {}
  end
  if #indexed > 0 then
    rcall('ZADD', K_KEYS, unpack(indexed))
    indexed = {}
  end
end

-- flush_ends applies what finish_lease left to it, the deferred ZADDs
-- too: before anything reads ready, leased, keys or meta's v (earliest
-- reads leased), and before a call that ended leases claims or returns.
local function flush_ends()
  flush_adds()
  if #unleased > 0 then
    rcall('ZREM', K_LEASED, unpack(unleased))
    unleased = {}
  end
  if #unindexed > 0 then
    rcall('ZREM', K_KEYS, unpack(unindexed))
    unindexed = {}
  end
  if unstored > 0 then
    rcall('HINCRBY', K_META, 'v', str(-unstored))
    unstored = 0
  end
end

-- earliest is the first time a key that is not ready becomes ready: a
-- burst, a delayed batch or a lapse; nil when none will.
local function earliest()
  flush_ends()
  local m
  for _, k in ipairs({K_PENDING, K_DELAYED, K_LEASED}) do
    local r = rcall('ZRANGE', k, '0', '0', 'WITHSCORES')
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
  if t == INF or woken or claiming then
    return
  end
  local m = earliest()
  if m == nil or t < m then
    wake()
  end
end

-- features reports whether the queue may use pauses, tenants or several
-- leases of a key (its features key), asking Redis once a call.
local function features()
  if featq == nil then
    featq = rcall('EXISTS', K_FEATURES) == 1
  end
  return featq
end

-- feature_on notes that this call creates paused, pausedkeys, tweights or
-- multi: the queue's Claims take the long way from now on.
local function feature_on()
  if featq ~= true then
    rcall('ZADD', K_FEATURES, '0', 'on')
    featq = true
  end
end

-- fair reports whether the queue has tenants, asking Redis once a call,
-- and not at all in a queue without features.
local function fair()
  if fairq == nil then
    fairq = features() and rcall('EXISTS', K_TW) == 1
  end
  return fairq
end

-- tenant_set is the ZSET of tenant g's ready keys: ready for none ('' or
-- false).
local function tenant_set(g)
  if not g or g == '' then
    return K_READY
  end
  return PFX .. 'r:' .. g
end

-- ready_set is the ZSET that key, with hash kk, is in when ready.
local function ready_set(kk)
  return tenant_set(fair() and rcall('HGET', kk, 'tn'))
end

-- vstr is the virtual time v as the scripts store it, %.17g, which
-- Redis reads back as v: a whole number below 10^15 prints the same with
-- %d, which costs less.
local function vstr(v)
  if v % 1 == 0 and v < 1e15 and v > -1e15 then
    return string.format('%d', v)
  end
  return string.format('%.17g', v)
end

-- WIDE is the length of a member longer than Redis keeps in a listpack
-- (zset-max-listpack-value and hash-max-listpack-value, 64 bytes unless
-- configured larger): see unlist.
local WIDE = 256

-- unlist gives turns, and then tweights, Redis's skiplist and hash table
-- encodings if turns has the listpack one, by adding a member that no
-- listpack holds and removing it: Redis converts a ZSET or HASH when a
-- member is too long, and does not convert it back. A Claim advances
-- each tenant it serves in turns, which in a listpack scans and moves the
-- list (O(T) a tenant, T the turns), and looks up their weights, which a
-- listpack scans too. The members stay what they were, so no version
-- reads anything else. pop_turns runs it once a call, when it advances
-- several turns at once.
-- A user whose ACL denies OBJECT keeps the listpacks: pcall, so that
-- the Claim goes on. Redis converts back only a set it deletes and makes
-- again, turns once no tenant has a turn left: so the calls on a queue
-- ask again only once every 64, in which such a turns costs time, not
-- order.
local function unlist()
  unlisted = true
  local e = redis.pcall('OBJECT', 'ENCODING', K_TURNS)
  if e ~= 'listpack' and e ~= 'ziplist' then
    if e == 'skiplist' then
      unlist_keep[1], unlist_keep[2] = PFX, 64
    end
    return
  end
  -- NX: in a listpack no member is as long, unless the server keeps
  -- longer ones there, and then the member may be a tenant's.
  local wide = string.rep('~', WIDE)
  if rcall('ZADD', K_TURNS, 'NX', '0', wide) == 1 then
    rcall('ZREM', K_TURNS, wide)
  end
  e = rcall('OBJECT', 'ENCODING', K_TW)
  if (e == 'listpack' or e == 'ziplist') and rcall('HSETNX', K_TW, wide, '1') == 1 then
    rcall('HDEL', K_TW, wide)
  end
  unlist_keep[1], unlist_keep[2] = PFX, 64
end

-- join gives tenant g a turn if it has none, from the larger of its own
-- virtual time and the queue's clock: idleness earns no credit.
local function join(g)
  if rcall('ZSCORE', K_TURNS, g) then
    return
  end
  local v = tonumber(rcall('HGET', K_TV, g)) or 0
  local c = tonumber(rcall('HGET', K_META, 'tc')) or 0
  if c > v then
    v = c
  end
  rcall('ZADD', K_TURNS, vstr(v), g)
end

-- tenants_ready counts the ready keys of the tenants but those without
-- one (in ready): O(T) in the T tenants with turns.
local function tenants_ready()
  if not fair() then
    return 0
  end
  local n = 0
  for _, g in ipairs(rcall('ZRANGE', K_TURNS, '0', '-1')) do
    if g ~= '' then
      n = n + rcall('ZCARD', tenant_set(g))
    end
  end
  return n
end

-- enter puts key, with hash kk, in the ready order at ts: its tenant's,
-- g, looked up when nil.
local function enter(key, kk, ts, g)
  if g == nil then
    g = fair() and rcall('HGET', kk, 'tn')
  end
  if not g or g == '' then
    if not deferring then
      rcall('ZADD', K_READY, ts, key)
      return
    end
    readied[#readied + 1] = ts
    readied[#readied + 1] = key
    if #readied >= DEFER then
      flush_adds()
    end
    return
  end
  -- A tenant with ready keys has a turn (only a Claim that finds its set
  -- empty ends it), so only one whose set was empty may need one: ZCARD
  -- costs less than a look for the tenant in turns.
  local set = PFX .. 'r:' .. g
  local had = rcall('ZCARD', set) > 0
  rcall('ZADD', set, ts, key)
  if not had then
    join(g)
  end
end

-- weigh notes tenant g, named by an Add with weight w (0: keep), which
-- turns the queue's tenants on.
local function weigh(g, w)
  feature_on()
  if w > 0 then
    rcall('HSET', K_TW, g, str(w))
  else
    rcall('HSETNX', K_TW, g, '1')
  end
  fairq = true
end

-- close_burst ends the open burst of key: its values are ready.
local function close_burst(kk, key)
  rcall('HDEL', kk, 'b', 'bf', 'bd', 'm')
  rcall('ZREM', K_TRAILING, key)
end

-- make_ready puts key in the ready order at the time ts, a string: its
-- tenant's, g, looked up when nil.
local function make_ready(key, kk, ts, g)
  rcall('HSET', kk, 's', 'r')
  enter(key, kk, ts, g)
end

-- push appends the stored values vals to the LIST vk, in slices that
-- unpack can take, and returns its length.
local function push(vk, vals)
  local len
  for i = 1, #vals, 4000 do
    len = rcall('RPUSH', vk, unpack(vals, i, math.min(i + 3999, #vals)))
  end
  return len
end

-- due_of returns when the stored value v is due, if it was added with a
-- Delay: a number; nil otherwise.
local function due_of(v)
  local d = string.match(v, '^%d+@([^:]+):')
  return d and tonumber(d)
end

-- head_due returns when the first value of the key with hash kk and list
-- vk is due, if that is after now; nil if it is due, and then it drops g,
-- the key's latest due, once that passed.
local function head_due(kk, vk, now, g)
  if tonumber(g) <= now then
    rcall('HDEL', kk, 'g')
    return nil
  end
  local due = due_of(rcall('LINDEX', vk, '0'))
  if due and due > now then
    return due
  end
  return nil
end

-- due_count returns how many of the first n values of the key with hash
-- kk and list vk are due at now, the key's latest due being g: those
-- before the first that is not, whose time it returns too. vals holds at
-- least the first n values, if the caller read them.
local function due_count(kk, vk, n, now, g, vals)
  if tonumber(g) <= now then
    rcall('HDEL', kk, 'g')
    return n
  end
  if not vals then
    vals = rcall('LRANGE', vk, '0', str(n - 1))
  end
  local m = #vals
  if m > n then
    m = n
  end
  for i = 1, m do
    local due = due_of(vals[i])
    if due and due > now then
      return i - 1, due
    end
  end
  return n
end

-- settle places a key that is no longer leased, delayed or held and has
-- left values, its next batch starting over (no attempts, size not
-- fixed, no error): ready at now, scheduled until its first value is due
-- if that is later (g, the key's latest due, tells whether it may be), or
-- pending until its burst is due if all of them are in the burst. b, bd,
-- e, g and tn are its hash's fields (tn nil: not read).
local function settle(key, kk, left, now, now_s, b, bd, e, g, tn)
  if e then
    rcall('HDEL', kk, 'e')
  end
  b = tonumber(b) or 0
  if b > 0 and tonumber(bd) <= now then
    close_burst(kk, key)
    b = 0
  end
  if left > b then
    local due = g and head_due(kk, PFX .. 'v:' .. key, now, g)
    if due then
      rcall('HSET', kk, 's', 'w', 'a', '0', 'n', '0')
      wake_before(due)
      rcall('ZADD', K_DELAYED, str(due), key)
      return
    end
    rcall('HSET', kk, 's', 'r', 'a', '0', 'n', '0')
    enter(key, kk, now_s, tn)
    wake()
    return
  end
  rcall('ZREM', K_TRAILING, key)
  rcall('HSET', kk, 's', 'p', 'a', '0', 'n', '0')
  wake_before(tonumber(bd))
  rcall('ZADD', K_PENDING, bd, key)
end

-- place updates key, which had values before n more came at t (ts as a
-- string), as an Add with Wait wait and MaxWait maxwait does: h holds its
-- fields s, b, bf, bd and g from before.
local function place(key, kk, n, t, ts, wait, maxwait, h)
  local s, b = h[1], tonumber(h[2]) or 0
  if b > 0 and tonumber(h[4]) <= t then
    -- The open burst came due: its values are ready, in its place.
    close_burst(kk, key)
    b = 0
    if s == 'p' then
      rcall('ZREM', K_PENDING, key)
      make_ready(key, kk, h[4], h[5])
      s = 'r'
    end
  end
  if wait == 0 then
    -- Ready at once, and so is the burst they queue behind.
    if b > 0 then
      close_burst(kk, key)
      if s == 'p' then
        rcall('ZREM', K_PENDING, key)
        make_ready(key, kk, ts, h[5])
        wake()
      end
    end
    return
  end
  if b == 0 then
    -- A new burst behind values that are ready, leased, delayed or held.
    local due, m = burst_due(t, t, wait, maxwait)
    due = str(due)
    rcall('HSET', kk, 'b', str(n), 'bf', ts, 'bd', due, 'm', m)
    rcall('ZADD', K_TRAILING, due, key)
    return
  end
  local due, m = burst_due(t, tonumber(h[3]), wait, maxwait)
  local due_s = str(due)
  rcall('HSET', kk, 'b', str(b + n), 'bd', due_s, 'm', m)
  if s ~= 'p' then
    rcall('ZADD', K_TRAILING, due_s, key)
    return
  end
  if due < tonumber(h[4]) then
    wake_before(due)
  end
  rcall('ZADD', K_PENDING, due_s, key)
end

-- params reads an Add's params: its count of values, Wait, MaxWait and
-- Delay, and its tenant (nil for none) and weight.
local function params(p)
  if not string.find(p, ' ', 1, true) then
    return tonumber(p), 0, 0, 0
  end
  local n, wait, maxwait, delay, rest = 0, 0, 0, 0, 0
  n, delay, rest = string.match(p, '^(%d+) @(%-?%d+)()')
  if n then
    wait, maxwait = 0, 0
  else
    n, wait, maxwait, rest = string.match(p, '^(%d+) (%-?%d+) (%d+)()')
    delay = 0
  end
  n, wait, maxwait, delay = tonumber(n), tonumber(wait), tonumber(maxwait), tonumber(delay)
  if rest > #p then
    return n, wait, maxwait, delay
  end
  local w, from = string.match(p, '^ (%d+) ()', rest)
  return n, wait, maxwait, delay, string.sub(p, from), tonumber(w)
end

-- add_at applies to key, once pushed, the n values of an Add at t (ts)
-- with Wait wait and MaxWait maxwait, the key's LIST being len long with
-- them: a new key joins keys, and the Add's tenant tn (nil: none), and
-- is ready, scheduled or pending, from t; an older one is placed. With a
-- Delay (so with a Wait of 0), gate is the latest time its values are
-- due, and head when the first is.
local function add_at(key, kk, n, len, t, ts, wait, maxwait, gate, head, tn)
  if len == n then
    if deferring then
      indexed[#indexed + 1] = '0'
      indexed[#indexed + 1] = key
      if #indexed >= DEFER then
        flush_adds()
      end
    else
      rcall('ZADD', K_KEYS, '0', key)
    end
    if tn then
      rcall('HSET', kk, 'tn', tn)
    end
    if wait == 0 then
      if gate then
        rcall('HSET', kk, 'g', str(gate))
      end
      if head then
        -- Scheduled until its first value is due.
        rcall('HSET', kk, 's', 'w')
        rcall('ZADD', K_DELAYED, str(head), key)
        return
      end
      -- A new key, ready; its state needs no hash, but for a tenant.
      enter(key, kk, ts, tn or '')
      return
    end
    local due, m = burst_due(t, t, wait, maxwait)
    due = str(due)
    rcall('HSET', kk, 's', 'p', 'b', str(n), 'bf', ts, 'bd', due, 'm', m)
    rcall('ZADD', K_PENDING, due, key)
    return
  end
  if gate and gate > (tonumber(rcall('HGET', kk, 'g')) or 0) then
    rcall('HSET', kk, 'g', str(gate))
  end
  local h
  if featq == false then
    -- Without features, no key has a tenant.
    h = rcall('HMGET', kk, 's', 'b', 'bf', 'bd')
    h[5] = ''
  else
    h = rcall('HMGET', kk, 's', 'b', 'bf', 'bd', 'tn')
  end
  if wait == 0 and not h[2] then
    -- No open burst to end: the values wait behind the others, but for a
    -- key with leases out that may now take another.
    if h[1] == 'm' then
      m_added(key, kk, n, t, ts)
    end
    return
  end
  place(key, kk, n, t, ts, wait, maxwait, h)
  if h[1] == 'm' then
    m_added(key, kk, n, t, ts, h[2], h[4])
  end
end

-- fold_key folds the Adds of key, oldest first: adds holds, for each
-- one, the index in e of its first element and its params (params, as a
-- list). Adds with a Wait of 0 that follow one another are pushed
-- together: after the first, the key has no open burst, so the others
-- only append (and raise the key's g, for those with a Delay).
local function fold_key(key, adds, e)
  local kk, vk = PFX .. 'k:' .. key, PFX .. 'v:' .. key
  local j, na = 1, #adds
  while j <= na do
    local first, p0 = adds[j], adds[j + 1]
    local vals, nv = {}, 0
    local gate, head
    repeat
      local i, p = adds[j], adds[j + 1]
      local n = p[1]
      if p[4] ~= 0 then
        local due = deadline(at(e[i], e[i + 1]), p[4])
        local stamp = e[i] .. ZEROS[#e[i + 1]] .. e[i + 1] .. '@' .. str(due) .. ':'
        if gate == nil or due > gate then
          gate = due
        end
        if i == first then
          head = due
        end
        for v = i + 4, i + 3 + n do
          nv = nv + 1
          vals[nv] = stamp .. e[v]
        end
      elseif n == 1 then
        -- One concatenation, as each makes a string of its own.
        nv = nv + 1
        vals[nv] = e[i] .. ZEROS[#e[i + 1]] .. e[i + 1] .. ':' .. e[i + 4]
      else
        local stamp = e[i] .. ZEROS[#e[i + 1]] .. e[i + 1] .. ':'
        for v = i + 4, i + 3 + n do
          nv = nv + 1
          vals[nv] = stamp .. e[v]
        end
      end
      j = j + 2
    until p0[2] ~= 0 or j > na or adds[j + 1][2] ~= 0
    local t, ts = at(e[first], e[first + 1])
    add_at(key, kk, nv, push(vk, vals), t, ts, p0[2], p0[3], gate, head, p0[5])
  end
end

-- FOLD bounds the inbox elements one fold reads, so that a script never
-- stalls the server for long; one Add larger than that is folded whole.
local FOLD, FOLD_LAST = 4096, '4095'

-- fold applies the Adds waiting in the inbox, each as at its own time,
-- oldest first, and removes them. It returns false if Adds are left, for
-- the script to return FOLDING and run again.
local function fold()
  local e = rcall('LRANGE', K_INBOX, '0', FOLD_LAST)
  if #e == 0 then
    return true
  end
  -- parsed holds the params of the Adds by their string, which most
  -- Adds share: each is read once.
  local keys, by, parsed = {}, {}, {}
  local i, ne = 1, #e
  while i + 3 <= ne do
    local ps = e[i + 2]
    local p = parsed[ps]
    if not p then
      p = {params(ps)}
      parsed[ps] = p
    end
    local last = i + 3 + p[1]
    if last > ne then
      if i > 1 then
        break
      end
      e = rcall('LRANGE', K_INBOX, '0', str(last - 1))
      ne = #e
    end
    local key = e[i + 3]
    local adds = by[key]
    if not adds then
      adds = {}
      by[key] = adds
      keys[#keys + 1] = key
    end
    adds[#adds + 1] = i
    adds[#adds + 1] = p
    if p[5] then
      weigh(p[5], p[6])
    end
    i = last + 1
  end
  rcall('LTRIM', K_INBOX, str(i - 1), '-1')
  if #keys > 16 then
    -- One command to learn that no key has a tenant, which spares each
    -- key's place a field (add_at).
    features()
  end
  deferring = true
  for _, key in ipairs(keys) do
    fold_key(key, by[key], e)
  end
  deferring = false
  flush_adds()
  if i > #e and #e < FOLD then
    return true
  end
  return rcall('EXISTS', K_INBOX) == 0
end

-- append adds the stored values vals to the tail of key, ready at once,
-- as Redrive does, at now (now_s).
local function append(key, kk, vk, vals, now, now_s)
  local n = #vals
  local len = push(vk, vals)
  rcall('HINCRBY', K_META, 'v', str(n))
  add_at(key, kk, n, len, now, now_s, 0, 0)
  wake()
end

-- come_due makes key, whose lease lapsed or whose delayed batch came due
-- at ts, ready in its place; a key in multi mode is placed as its state
-- says.
local function come_due(key, ts)
  local kk = PFX .. 'k:' .. key
  if not features() then
    -- No key in multi mode, no tenant: as before either came.
    make_ready(key, kk, ts, '')
    return
  end
  if rcall('HGET', kk, 's') == 'm' then
    m_due(key, kk, ts)
    return
  end
  make_ready(key, kk, ts)
end

-- due_by returns up to lim members of the ZSET k whose score is at most
-- now, lowest first, with their scores, and removes them from k.
local function due_by(k, now, lim)
  local r = rcall('ZRANGEBYSCORE', k, '-inf', now, 'WITHSCORES', 'LIMIT', '0', lim)
  if #r > 0 then
    rcall('ZREMRANGEBYRANK', k, '0', str(#r / 2 - 1))
  end
  return r
end

-- promote moves up to lim keys of each kind that are due by now_s into
-- the ready order, at the time each became due. The keys left behind are
-- due no sooner than those moved, so the first lim keys of the ready order
-- are right. Bursts that came due behind other values are closed by the
-- scripts that look at their keys next.
local function promote(now_s, lim)
  lim = str(lim)
  -- Lapsed leases: the same batch, leased again as the next attempt.
  local r = due_by(K_LEASED, now_s, lim)
  for i = 1, #r, 2 do
    come_due(r[i], r[i + 1])
  end
  -- Without delayed or pending keys, which a queue's common path has
  -- none of, one command spares the two lookups.
  if rcall('EXISTS', K_DELAYED, K_PENDING) == 0 then
    return
  end
  -- Retried and deferred batches.
  r = due_by(K_DELAYED, now_s, lim)
  for i = 1, #r, 2 do
    come_due(r[i], r[i + 1])
  end
  -- Bursts that came due with nothing before them.
  r = due_by(K_PENDING, now_s, lim)
  for i = 1, #r, 2 do
    local kk = PFX .. 'k:' .. r[i]
    rcall('HDEL', kk, 'b', 'bf', 'bd', 'm')
    make_ready(r[i], kk, r[i + 1])
  end
end

-- leased_by returns the hash fields s, f, x and then fs of key if its
-- lease with fence fence still holds at now; nil if it lapsed, ended or
-- was superseded; 'm' and those fields if the key is in multi mode
-- (lib_perkey.lua).
local function leased_by(key, kk, fence, now, ...)
  local h = rcall('HMGET', kk, 's', 'f', 'x', ...)
  if h[1] ~= 'l' or h[2] ~= fence then
    if h[1] == 'm' then
      return 'm', h -- in multi mode: lib_perkey.lua looks its lease up
    end
    return nil
  end
  -- A lease taken before x was kept has its lapse in leased only.
  local x = h[3] or rcall('ZSCORE', K_LEASED, key)
  if not x or tonumber(x) <= now then
    return nil
  end
  return h
end

-- finish_lease ends the lease of key with fence fence, if it still holds
-- at now (now_s), as kind says (1 ack, 2 drop, 3 retry, 4 defer, 5 hold),
-- after the delay after of a retry or defer (-1: for ever), with the error
-- why of a drop (kept with the dead letter), a retry or a hold (kept in
-- the key's e until its head batch ends or is released). It returns 1 if
-- the key still has values, 0 if not, -1 if the lease lapsed, ended or was
-- superseded (and nothing changed). multi says the lease is likely of a
-- key in multi mode (a Claim with PerKey > 1 took it): the same read then
-- takes the key's multi state too. The call that runs it runs flush_ends
-- before it claims or returns.
local function finish_lease(key, fence, kind, after, why, now, now_s, multi)
  local kk, vk = PFX .. 'k:' .. key, PFX .. 'v:' .. key
  local h, mh
  -- T, the key's bucket, follows the fields, 13th; without multi, it is
  -- 5th, in place of a, which only a drop reads, and reads then.
  if multi then
    h, mh = leased_by(key, kk, fence, now, 'n', 'a', 'b', 'bd', 'e', 'g', 'tn', 'q', 'R', 'T')
  else
    h, mh = leased_by(key, kk, fence, now, 'n', 'T', 'b', 'bd', 'e', 'g', 'tn', 'q')
  end
  if not h then
    return -1
  end
  if h == 'm' then
    -- The fields m_load reads: s, R (absent: not read), b, bd, g, f, tn, T, q.
    local R, T = nil, mh[5]
    if multi then
      R, T = mh[12], mh[13]
    end
    return m_finish(key, kk, fence, kind, after, why, now, now_s, {mh[1], R, mh[6], mh[7], mh[9], mh[2], mh[10], T, mh[11]})
  end
  if h[10] then
    -- A key of a tenant: the queue has tweights, which no script deletes.
    featq, fairq = true, true
  end
  local n = h[4]
  unleased[#unleased + 1] = key

  if kind == 1 or kind == 2 then
    if kind == 2 then
      local id = rcall('HINCRBY', K_META, 'd', '1')
      local dk = PFX .. 'd:' .. id
      rcall('RPUSH', dk, key, why, multi and h[5] or rcall('HGET', kk, 'a'), now_s)
      rcall('RPUSH', dk, unpack(rcall('LRANGE', vk, '0', str(tonumber(n) - 1))))
      rcall('ZADD', K_DEAD, id, id)
      rcall('ZADD', K_DEADAT, now_s, id)
    end
    unstored = unstored + tonumber(n)
    if h[11] == fence then
      -- The lease saw a value after its batch that no burst holds, and
      -- such a value stays: the key has more values than its burst.
      rcall('LTRIM', vk, n, '-1')
      deferring = true
      settle(key, kk, INF, now, now_s, h[6], h[7], h[8], h[9], h[10] or '')
      deferring = false
      return 1
    end
    local left = rcall('LLEN', vk) - tonumber(n)
    if left <= 0 then
      spill(key, h[multi and 13 or 5])
      rcall('DEL', kk, vk)
      unindexed[#unindexed + 1] = key
      return 0
    end
    rcall('LTRIM', vk, n, '-1')
    deferring = true
    settle(key, kk, left, now, now_s, h[6], h[7], h[8], h[9], h[10] or '')
    deferring = false
    return 1
  end

  if kind == 5 then
    rcall('HSET', kk, 's', 'h', 'e', why)
    rcall('ZADD', K_HELD, now_s, key)
    return 1
  end

  -- Retry or defer: the same batch, due after the delay. A defer does not
  -- count as an attempt: u has the next lease take this one's number.
  local due = deadline(now, after)
  local s = 'd'
  if due <= now then
    s = 'r'
  elseif kind == 3 then
    s = 't'
  end
  if kind == 3 then
    rcall('HSET', kk, 's', s, 'e', why)
  else
    rcall('HSET', kk, 's', s, 'u', '1')
  end
  if due <= now then
    enter(key, kk, now_s)
    wake()
    return 1
  end
  wake_before(due)
  rcall('ZADD', K_DELAYED, str(due), key)
  return 1
end

-- RATE_DEFERS bounds the keys that a Claim with a KeyRate defers for
-- their token: RATE_DEFERS for each key it wants, and 16 more. It may go
-- past by the keys of its last pop, at most those it wants.
local RATE_DEFERS = 4

-- The fields of a key that rate_read reads, as the Claim's lease reads
-- them, and T last: RATE_FIELDS for a lease of lib.lua (claim_ready),
-- RATE_MFIELDS for one of lib_perkey.lua (m_load).
local RATE_FIELDS = {'n', 'a', 'b', 'bd', 'u', 'g', 'R', 'T'}
local RATE_MFIELDS = {'s', 'R', 'b', 'bd', 'g', 'f', 'tn', 'T', 'q'}

-- rate_begin sets the KeyRate of a Claim at now (now_s) that wants want
-- keys with perkey: interval in microseconds (0: off) and burst, as
-- store.KeyRate has them. A Claim without one costs nothing more.
local function rate_begin(interval, burst, want, now, now_s, perkey)
  if interval <= 0 then
    return
  end
  rate_i, rate_tol = interval, (math.max(burst, 1) - 1) * interval
  rate_now, rate_now_s = now, now_s
  rate_t, rate_h, rate_left, rate_full = {}, {}, RATE_DEFERS * want + 16, false
  rate_fields = perkey > 1 and RATE_MFIELDS or RATE_FIELDS
end

-- rate_read reads the fields of the keys of got (key, score, ...) that
-- their lease reads, T among them, and looks up in one ZMSCORE the T of
-- those whose hash has none and that the Claim has not looked up yet.
local function rate_read(got)
  local names
  for i = 1, #got, 2 do
    local key = got[i]
    local h = rcall('HMGET', PFX .. 'k:' .. key, unpack(rate_fields))
    rate_h[key] = h
    if rate_t[key] == nil then
      local t = tonumber(h[8])
      if t then
        rate_t[key] = t
      else
        names = names or {}
        names[#names + 1] = key
      end
    end
  end
  if not names then
    return
  end
  local ts = rcall('ZMSCORE', K_RATES, unpack(names))
  for i = 1, #names do
    rate_t[names[i]] = tonumber(ts[i]) or false
  end
end

-- rate_has reports whether key, looked up, has a token at the Claim's
-- now: T <= now + (Burst-1)*Interval.
local function rate_has(key)
  local t = rate_t[key]
  return not t or t <= rate_now + rate_tol
end

-- rate_take takes a token of key for a lease at the Claim's now, and
-- returns T as it becomes, max(T, now) + Interval, for the lease's HSET.
local function rate_take(key)
  local t = rate_t[key]
  if not t or t < rate_now then
    t = rate_now
  end
  t = t + rate_i
  rate_t[key] = t
  return str(t)
end

-- rate_defer defers key, popped from the ready order without a token, as
-- a Finish with Defer would leave it (s d, in delayed; no attempt, no
-- lease, no fence) until its token is due, T - (Burst-1)*Interval; a key
-- in multi mode stays in it, ready no sooner (m_defer). The Claim wakes
-- whom it must once it is done (claiming).
local function rate_defer(key)
  local due = rate_t[key] - rate_tol
  local kk = PFX .. 'k:' .. key
  rate_left = rate_left - 1
  if rate_left <= 0 then
    rate_full = true
  end
  rate_h[key] = nil
  -- Without features, no key is in multi mode.
  if featq ~= false and rcall('HGET', kk, 's') == 'm' then
    local was = claiming
    claiming = true
    m_defer(key, kk, due, rate_now, rate_now_s)
    claiming = was
    return
  end
  local due_s = str(due)
  rcall('HSET', kk, 's', 'd', 'K', due_s)
  rcall('ZADD', K_DELAYED, due_s, key)
end

-- rate_pass returns the keys of got (key, score, ...) that have a token,
-- in their order, and defers the others; for as many as it defers it pops
-- more with pop(n), while the Claim may defer more.
local function rate_pass(got, pop)
  if rate_i == 0 or #got == 0 then
    return got
  end
  rate_read(got)
  local all = true
  for i = 1, #got, 2 do
    if not rate_has(got[i]) then
      all = false
      break
    end
  end
  if all then
    -- Most often: no table to build.
    return got
  end
  local keep = {}
  while true do
    local short = 0
    for i = 1, #got, 2 do
      local key = got[i]
      if rate_has(key) then
        keep[#keep + 1] = key
        keep[#keep + 1] = got[i + 1]
      else
        rate_defer(key)
        short = short + 1
      end
    end
    if short == 0 or rate_full then
      break
    end
    got = pop(short)
    if #got == 0 then
      break
    end
    rate_read(got)
  end
  return keep
end

-- rate_pass_one reports whether key, popped from the ready order, has a
-- token, and defers it if not.
local function rate_pass_one(key)
  rate_read({key, ''})
  if rate_has(key) then
    return true
  end
  rate_defer(key)
  return false
end

-- PARK_ROUNDS bounds the rounds of pop_ready: each sets aside at least one
-- paused key, which stays aside, so a Claim that stops there leaves the
-- rest to the next.
local PARK_ROUNDS = 64

-- park sets aside the paused key, ready since ts, from the ready order.
local function park(key, ts)
  rcall('ZADD', K_PARKED, ts, key)
end

-- pop_ready pops up to want keys off the front of the ready order at
-- now_s, with their scores. With some keys paused (any, true), it sets
-- aside those of the popped keys that are paused, as they come, and pops
-- others in their place, after moving the keys that came due meanwhile.
local function pop_ready(now_s, want, any)
  local got = rcall('ZPOPMIN', K_READY, str(want))
  if not any or #got == 0 then
    return got
  end
  local keep, rounds = {}, 0
  while #got > 0 do
    local names = {}
    for i = 1, #got, 2 do
      names[#names + 1] = got[i]
    end
    local paused = rcall('SMISMEMBER', K_PAUSEDKEYS, unpack(names))
    local parked = false
    for i = 1, #names do
      if paused[i] == 1 then
        park(got[2 * i - 1], got[2 * i])
        parked = true
      else
        keep[#keep + 1] = got[2 * i - 1]
        keep[#keep + 1] = got[2 * i]
      end
    end
    local short = want - #keep / 2
    rounds = rounds + 1
    if not parked or short == 0 or rounds == PARK_ROUNDS then
      break
    end
    promote(now_s, short + 16)
    got = rcall('ZPOPMIN', K_READY, str(short))
  end
  return keep
end

-- bytes_less reports whether the string a comes before b byte by byte, as
-- a ZSET orders members of one score (Lua's < follows the locale).
local function bytes_less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- UNLIST_AT is the fewest members of a ZADD of turns (two a turn) that
-- has pop_turns run unlist: a Claim of one key or two pays no command
-- for it.
local UNLIST_AT = 6

-- TURNS_READ bounds the turns pop_turns reads at once, which unpack
-- passes to one command.
local TURNS_READ = 1000

-- The tables pop_turns fills a round, kept from call to call: new ones a
-- round cost Lua's allocator and collector more than the commands they
-- hold. A round counts how much of each it filled; what lies past that is
-- a round's before.
local pt_names, pt_add, pt_rem, pt_tv, pt_sets = {}, {}, {}, {}, {}

-- The virtual times and weights that turns and tweights hold are few at a
-- time (the tenants' times lie within a turn or so of one another), and
-- each comes back call after call: vt's num holds the number of a score
-- as Redis replies it, its str the string vstr makes of a time, its step
-- 1/weight by the weight as HMGET replies it (false: none, 1), so that a
-- turn costs a table lookup each, not a string conversion (tonumber
-- twice, string.format); n counts their entries, which start over once
-- 4096 or more.
local vt = {num = {}, str = {}, step = {}, n = 0}

-- vt_next is the virtual time of a turn at s (a score as Redis replies
-- it) advanced by one turn of weight w (HMGET's reply), as a number and
-- as the string the scripts store.
local function vt_next(s, w)
  if vt.n >= 4096 then
    vt.num, vt.str, vt.step, vt.n = {}, {}, {}, 0
  end
  local v, step = vt.num[s], vt.step[w]
  if v == nil or step == nil then
    v, step = tonumber(s), 1 / (tonumber(w) or 1)
    vt.num[s], vt.step[w], vt.n = v, step, vt.n + 2
  end
  v = v + step
  local vs = vt.str[v]
  if vs == nil then
    vs = vstr(v)
    vt.str[v], vt.n = vs, vt.n + 1
  end
  return v, vs
end

-- pop_turns pops up to want ready keys in the tenants' turns, with their
-- scores: each from the tenant with the smallest virtual time, which
-- advances by 1/weight, the clock moving to where it was. With some keys
-- paused (any), it sets aside those it pops, without a turn; with a
-- KeyRate, it defers those without a token, without a turn. Each round
-- leases, sets aside, defers or ends the turns of a tenant left without
-- ready keys (a pause or a drop took them), so want + PARK_ROUNDS, and
-- the deferrals the Claim has left, bound them.
-- untenanted tells whether ready has keys, if the caller knows.
--
-- It reads the first n turns at once (n the keys it still wants) and
-- their weights, and takes them in that order for as long as each turn
-- it advances falls behind the last one read (a larger virtual time, or
-- the same and a larger name): until then the next turn is the next one
-- read, or that turn's set may have come empty. Then it learns which
-- sets did, and writes the turns it advanced or ended at once, and reads
-- again for the rest. The turns end as one round at a time leaves them.
-- A key costs one command (ZPOPMIN of its tenant's set), a read four to
-- six (ZRANGE, HMGET, EXISTS, ZADD; ZREM and HSET for the turns that
-- end) and an EXISTS a tenant left without keys: O(n log T) in the T
-- turns.
local function pop_turns(want, any, untenanted)
  if untenanted == nil then
    untenanted = rcall('ZCARD', K_READY) > 0
  end
  if untenanted then
    -- The keys without a tenant enter ready without a look at tenants.
    join('')
  end
  local keep, rounds, clock = {}, 0, nil
  local limit = want + PARK_ROUNDS
  if rate_i > 0 then
    limit = limit + rate_left
  end
  local names, add, rem, tv, sets = pt_names, pt_add, pt_rem, pt_tv, pt_sets
  while #keep < 2 * want and rounds < limit and not rate_full do
    local n = math.min(want - #keep / 2, TURNS_READ)
    local r = rcall('ZRANGE', K_TURNS, '0', str(n - 1), 'WITHSCORES')
    if not r[1] then
      break
    end
    n = #r / 2
    for i = 1, n do
      names[i] = r[2 * i - 1]
    end
    local ws = rcall('HMGET', K_TW, unpack(names, 1, n))
    local lg, lv = r[2 * n - 1], tonumber(r[2 * n])
    -- add holds the turns advanced (na of it), rem those that end (nr)
    -- and tv their times (2 nr); sets the sets of the tenants that
    -- leased a key this round (ns), whose turns add holds.
    local na, nr, ns = 0, 0, 0
    local i = 1
    while i <= n and #keep < 2 * want and rounds < limit and not rate_full do
      rounds = rounds + 1
      local g, s = names[i], r[2 * i]
      local set = tenant_set(g)
      local got = rcall('ZPOPMIN', set)
      if not got[1] then
        nr = nr + 1
        rem[nr] = g
        tv[2 * nr - 1], tv[2 * nr] = g, s
        i = i + 1
      elseif any and rcall('SISMEMBER', K_PAUSEDKEYS, got[1]) == 1 then
        park(got[1], got[2])
      elseif rate_i > 0 and not rate_pass_one(got[1]) then
        -- Deferred for its token: the tenant keeps its turn.
      else
        clock = s
        local v, vs = vt_next(s, ws[i])
        keep[#keep + 1] = got[1]
        keep[#keep + 1] = got[2]
        i = i + 1
        add[na + 1], add[na + 2] = vs, g
        na = na + 2
        ns = ns + 1
        sets[ns] = set
        if i <= n and (v < lv or (v == lv and bytes_less(g, lg))) then
          -- It comes before the last turn read again, if its set has
          -- keys left: which turn is next, only turns itself can tell.
          break
        end
      end
    end
    -- Which of the tenants served are left without ready keys, and so
    -- end their turns: Redis deletes an empty set, so one EXISTS of all
    -- their sets, which no tenant appears in twice, tells whether none
    -- is, in place of a ZCARD each; one each only if some are. The turns
    -- that stay move to the front of add, in their order.
    if ns > 0 and rcall('EXISTS', unpack(sets, 1, ns)) < ns then
      na = 0
      for j = 1, ns do
        local vs, g = add[2 * j - 1], add[2 * j]
        if rcall('EXISTS', sets[j]) == 1 then
          add[na + 1], add[na + 2] = vs, g
          na = na + 2
        else
          nr = nr + 1
          rem[nr] = g
          tv[2 * nr - 1], tv[2 * nr] = g, vs
        end
      end
    end
    if na > 0 then
      if na >= UNLIST_AT and not unlisted then
        unlist()
      end
      rcall('ZADD', K_TURNS, unpack(add, 1, na))
    end
    if nr > 0 then
      rcall('ZREM', K_TURNS, unpack(rem, 1, nr))
      rcall('HSET', K_TV, unpack(tv, 1, 2 * nr))
    end
  end
  if clock then
    rcall('HSET', K_META, 'tc', clock)
  end
  return keep
end

-- pop_plain pops up to want keys off the front of the ready order, with
-- their scores, if the queue has no features; it returns nil, and pops
-- nothing, if it has (the features key popped only to be put back). One
-- command either way, as ZMPOP pops from the first of its sets that has
-- members: with features, that is the features key.
local function pop_plain(want)
  if featq == false then
    return rcall('ZPOPMIN', K_READY, str(want))
  end
  if featq then
    return nil
  end
  local r = rcall('ZMPOP', '2', K_FEATURES, K_READY, 'MIN', 'COUNT', str(want))
  if not r then
    featq = false
    return {}
  end
  if r[1] == K_FEATURES then
    featq, features_popped = true, true
    return nil
  end
  featq = false
  local got = {}
  for i, e in ipairs(r[2]) do
    got[2 * i - 1] = e[1]
    got[2 * i] = e[2]
  end
  return got
end

-- feature_names makes FEATURE_NAMES, the names of the queue's keys that
-- tell its features, each as often as its weight (see claim_ready), and
-- PERKEY_NAMES, those of them but multi and ready, each half as often,
-- and FAIR_NAMES, those but tweights, each half as often; once for a run
-- of calls on the same queue.
local function feature_names()
  if NAMES_PFX == PFX then
    return
  end
  NAMES_PFX, FEATURE_NAMES, PERKEY_NAMES, FAIR_NAMES = PFX, {K_MULTI}, {}, {K_MULTI}
  for i, k in ipairs({K_TW, K_PAUSEDKEYS, K_PAUSED, K_READY}) do
    for j = 1, 2 ^ i do
      FEATURE_NAMES[#FEATURE_NAMES + 1] = k
      if i < 4 and j <= 2 ^ (i - 1) then
        PERKEY_NAMES[#PERKEY_NAMES + 1] = k
      end
      if i > 1 and j <= 2 ^ (i - 1) then
        FAIR_NAMES[#FAIR_NAMES + 1] = k
      end
    end
  end
end

-- claim_ready leases up to want ready keys at now (now_s), oldest-ready
-- first, with at most maxbatch values each (0: all that are ready) for ttl
-- (-1: for ever), to holder, after moving the keys that came due into the
-- ready order; without features, it pops the ready order as it did before
-- any of them existed (pop_plain); paused keys it sets aside (pop_ready),
-- and nothing while the queue is paused. It returns {next, key, fence, attempt, count,
-- value..., key, ...}, next -1 (never) while the queue is paused. With
-- perkey > 1 (ClaimParams.PerKey), a key may take up to perkey leases
-- (lib_perkey.lua), several in one call: a key that leases in multi mode
-- and may lease again goes back in the ready order (its tenant's, with
-- tenants), and the call pops again while it has leased fewer than want,
-- each lease taking a turn of its tenant. With interval > 0 (a KeyRate,
-- with burst), each lease takes a token of its key, and a key without one
-- is deferred until its token is due, another popped in its place (see
-- rate_begin); next is 0 if the call deferred as many keys as it may.
local function claim_ready(now, now_s, want, maxbatch, ttl, holder, perkey, interval, burst)
  rate_begin(interval, burst, want, now, now_s, perkey)
  promote(now_s, want + 16)
  local got, paused, multi, untenanted = nil, false, false, nil
  if perkey <= 1 then
    got = pop_plain(want)
  end
  -- With perkey > 1 the queue has features once it leased a key, so the
  -- Claim asks which straight away.
  if not got then
    feature_names()
  end
  if not got and perkey > 1 then
    -- Its leases go to lib_perkey.lua whether keys are in multi mode or
    -- not, so it asks only for the other three, each named half as often
    -- as below (PERKEY_NAMES): with none, the features key may stay for
    -- multi, and featq stays unknown.
    local f = rcall('EXISTS', unpack(PERKEY_NAMES)) * 2
    if f > 0 then
      featq = true
    end
    if f >= 8 then
      return {-1}
    end
    paused, fairq = f >= 4, f % 4 >= 2
  elseif not got and fairq then
    -- A Finish of a key of a tenant knows the queue has tweights, and so
    -- features: the others and ready, each named half as often as below
    -- (FAIR_NAMES), in half the lookups.
    local f = rcall('EXISTS', unpack(FAIR_NAMES))
    untenanted = f >= 8
    if f % 8 >= 4 then
      return {-1}
    end
    paused, multi = f % 4 >= 2, f % 2 == 1
  elseif not got then
    -- The queue has features, which pop_plain may have popped: which are
    -- they still? The features key stays while one is. EXISTS counts a
    -- key as often as it is named, so one call tells all four apart, and
    -- whether ready has keys, which pop_turns would ask: ready 16 times,
    -- paused 8, pausedkeys 4, tweights 2, multi once (FEATURE_NAMES).
    local f = rcall('EXISTS', unpack(FEATURE_NAMES))
    untenanted = f >= 16
    f = f % 16
    if f == 0 then
      rcall('DEL', K_FEATURES)
      featq = false
    elseif features_popped then
      rcall('ZADD', K_FEATURES, '0', 'on')
    end
    features_popped = false
    if f >= 8 then
      return {-1}
    end
    paused, fairq, multi = f >= 4, f % 4 >= 2, f % 2 == 1
  end
  -- refill pops keys in place of those rate_pass deferred.
  local function refill(n)
    promote(now_s, n + 16)
    return pop_ready(now_s, n, paused)
  end
  local function pop(n)
    if fairq then
      return pop_turns(n, paused)
    end
    return rate_pass(pop_ready(now_s, n, paused), refill)
  end
  if not got then
    if fairq then
      got = pop_turns(want, paused, untenanted)
    else
      got = pop(want)
    end
  else
    got = rate_pass(got, refill)
  end
  local out = {0}
  local leased, again = 0, false
  local popped = #got > 0
  while #got > 0 do
    again = false
    local exp = str(deadline(now, ttl))
    local count = #got / 2
    local fence = rcall('HINCRBY', K_META, 'f', str(count)) - count
    local zadd = {}
    for i = 1, #got, 2 do
      local key = got[i]
      local kk, vk = PFX .. 'k:' .. key, PFX .. 'v:' .. key
      local h
      -- What rate_read read of it, with a KeyRate.
      local rh = rate_i > 0 and rate_h[key]
      if perkey > 1 then
        h = false -- lib_perkey.lua reads what it needs
      elseif rh then
        h = rh
      elseif multi then
        h = rcall('HMGET', kk, 'n', 'a', 'b', 'bd', 'u', 'g', 'R')
      else
        -- Without multi, no key is in multi mode.
        h = rcall('HMGET', kk, 'n', 'a', 'b', 'bd', 'u', 'g')
      end
      if perkey > 1 or h[7] then
        -- In multi mode, or to be: lib_perkey.lua leases it.
        fence = fence + 1
        -- The keys it puts back in ready wait in readied for the flush
        -- before the next pop.
        deferring, claiming = true, true
        local a, vals = m_lease(key, kk, got[i + 1], now, now_s, fence, maxbatch, exp, holder, perkey, now + leased, perkey > 1 and rh or nil)
        deferring, claiming = false, false
        if a then
          leased, again = leased + 1, true
          out[#out + 1] = key
          out[#out + 1] = fence
          out[#out + 1] = a
          out[#out + 1] = #vals
          for j = 1, #vals do
            out[#out + 1] = vals[j]
          end
        end
      else
        local n, b = tonumber(h[1]), tonumber(h[3]) or 0
        local due_at -- when the first value that is not due is, if one stops the batch
        if b > 0 and tonumber(h[4]) <= now then
          close_burst(kk, key)
          b = 0
        end
        -- vals: the first values, if read; len: how many values the key
        -- has at least, all if it has no more than read.
        local fixed, vals, len = n ~= nil and n > 0, nil, nil
        if b == 0 and (fixed or maxbatch > 0) then
          -- One LRANGE, up to one value past the most the batch takes,
          -- tells what LLEN would: how many the batch takes, and whether
          -- the key has a value after it, which spares its Finish an LLEN
          -- (q). Behind a burst it would read the burst's values too.
          vals = rcall('LRANGE', vk, '0', str(fixed and n or maxbatch))
          len = #vals
        elseif b == 0 then
          vals = rcall('LRANGE', vk, '0', '-1')
          len = #vals
        else
          len = rcall('LLEN', vk)
        end
        if not fixed then
          n = len - b
          if maxbatch > 0 and n > maxbatch then
            n = maxbatch
          end
          if h[6] then
            n, due_at = due_count(kk, vk, n, now, h[6], vals)
          end
        end
        local more = len > n + b
        fence = fence + 1
        if n > 0 then
          local a = (tonumber(h[2]) or 0) + 1
          if h[5] then
            -- The last lease was deferred: this one takes its number.
            a = a - 1
            rcall('HDEL', kk, 'u')
          end
          -- q: the key has a value after the batch that no burst holds
          -- (finish_lease).
          local fs = str(fence)
          if rate_i > 0 then
            -- T goes in the same HSET.
            rcall('HSET', kk, 's', 'l', 'f', fs, 'x', exp, 'a', str(a), 'n', str(n), 'c', now_s, 'o', holder, 'q', more and fs or '0', 'T', rate_take(key))
          else
            rcall('HSET', kk, 's', 'l', 'f', fs, 'x', exp, 'a', str(a), 'n', str(n), 'c', now_s, 'o', holder, 'q', more and fs or '0')
          end
          leased = leased + 1
          zadd[#zadd + 1] = exp
          zadd[#zadd + 1] = key
          if not vals then
            vals = rcall('LRANGE', vk, '0', str(n - 1))
          end
          local m = #vals
          if m > n then
            m = n
          end
          local o = #out
          out[o + 1] = key
          out[o + 2] = fence
          out[o + 3] = a
          out[o + 4] = m
          for j = 1, m do
            out[o + 4 + j] = vals[j]
          end
        elseif due_at then
          -- Never so while the scripts keep the model, which schedule a key
          -- until its first value is due: it waits for it.
          rcall('HSET', kk, 's', 'w')
          rcall('ZADD', K_DELAYED, str(due_at), key)
        elseif b > 0 then
          -- Never so while the scripts keep the model; an empty lease would
          -- take every value (LRANGE 0 -1), so the key waits for its burst.
          local bd = rcall('HGET', kk, 'bd')
          settle(key, kk, b, now, now_s, b, bd)
        else
          spill(key, rcall('HGET', kk, 'T'))
          rcall('DEL', kk)
          rcall('ZREM', K_KEYS, key)
        end
      end
    end
    if #zadd > 0 then
      rcall('ZADD', K_LEASED, unpack(zadd))
    end
    flush_adds()
    got = {}
    if again and leased < want then
      got = pop(want - leased)
    end
  end
  if rate_full or rcall('ZCARD', fairq and K_TURNS or K_READY) > 0 then
    -- More is ready than this worker took, or may be behind the keys it
    -- deferred: pass the wake-up on.
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
    if popped then
      -- This worker may have been the one waiting for m, the next key due
      -- (perhaps one of these leases' lapse): it is busy now, so a waiting
      -- worker takes its place.
      wake()
    end
  end
  return out
end
