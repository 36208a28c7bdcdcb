--[[
  claim.lua leases up to ARGV[2] ready keys, oldest-ready first, after
  folding the inbox and moving the keys that came due into the ready order.

  KEYS[1]     the queue's ready (see lib.lua)
  ARGV[1]     prefix of the queue's names
  ARGV[2]     most keys to lease, at least 1
  ARGV[3]     most values in a lease, 0 for all that are ready
  ARGV[4]     TTL in microseconds, -1 for ever
  ARGV[5]     the holder, kept with each lease (ClaimParams.Holder)
  ARGV[6]     the most leases of one key at once (ClaimParams.PerKey);
              absent: 1 (see lib_perkey.lua)
  ARGV[7]     the Interval of the Claim's KeyRate in microseconds, and
  ARGV[8]     its Burst (store.KeyRate); absent: no KeyRate. With one,
              each lease takes a token of its key's bucket (rates), and a
              key without one is deferred until its token is due
  Returns FOLDING if Adds are left to fold; otherwise {next, key, fence,
  attempt, count, value..., key, ...}: one group per lease, each value as
  stored ("<time added>:<value>"), after next, the microseconds until the
  earliest key this call did not lease is ready: 0 if one is, -1 if none
  is due ever.
]]
-- @include lib.lua
local now, now_s = clock()
if not fold() then
  return FOLDING
end
return claim_ready(now, now_s, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]) or 1, tonumber(ARGV[7]) or 0, tonumber(ARGV[8]) or 0)
