--[[
  finish.lua ends leases that still hold, each as its outcome says, in
  turn, and then, if the callers ask, leases ready keys as claim.lua does,
  at the same instant: one round trip for workers that are done with their
  batches and want the next. A lease that lapsed, ended or was superseded
  changes nothing and asks for no key. Each lease ends a microsecond after
  the one before, so that the order of the calls holds.

  KEYS[1]     the queue's ready (see lib.lua)
  ARGV[1]     prefix of the queue's names; a dead letter is ARGV[1].."d:"..id
  ARGV[2]     most values in a lease, 0 for all that are ready
  ARGV[3]     TTL of a lease in microseconds, -1 for ever
  ARGV[4]     the holder of the leases it takes (ClaimParams.Holder)
  ARGV[5]     the most leases of one key at once (ClaimParams.PerKey);
              above 1, each lease check reads its key's multi state too
              (see lib_perkey.lua), as such a Claim's leases are of keys
              in multi mode
  ARGV[6..]   for each lease, six: its key, its fence, the outcome (1 ack,
              2 drop, 3 retry, 4 defer, 5 hold), the delay of a retry or
              defer in microseconds (-1 for ever), the error of a drop, a
              retry or a hold, and how many keys to lease for its caller
              (0: none)
  and, after them, with a KeyRate (store.KeyRate) for the leases it
  takes: its Interval in microseconds and its Burst (see claim.lua), which
  the count of ARGV tells apart, two more than 5 and six a lease
  Returns FOLDING if Adds are left to fold; otherwise {more, ...}, one per
  lease: 1 if its key still has values, 0 if not, -1 if the lease lapsed,
  ended or was superseded. If the leases that held asked for keys, the
  reply of claim.lua follows, for all of them: {next, key, fence, ...}.
]]
-- @include lib.lua
local now, now_s = clock()
if not fold() then
  return FOLDING
end
local out, want = {}, 0
local t, t_s = now, now_s
local multi = tonumber(ARGV[5]) > 1
local last, interval, burst = #ARGV, 0, 0
if last % 6 == 1 then
  interval, burst, last = tonumber(ARGV[last - 1]), tonumber(ARGV[last]), last - 2
end
for i = 6, last, 6 do
  if i > 6 then
    -- A microsecond apart, so that the keys they make ready keep the
    -- order of the calls, as they would with calls one after the other.
    t = t + 1
    t_s = str(t)
  end
  local more = finish_lease(ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), ARGV[i + 4], t, t_s, multi)
  out[#out + 1] = more
  if more >= 0 then
    want = want + tonumber(ARGV[i + 5])
  end
end
flush_ends()
if want == 0 then
  return out
end
local c = claim_ready(t, t_s, want, tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), interval, burst)
for i = 1, #c do
  out[#out + 1] = c[i]
end
return out
