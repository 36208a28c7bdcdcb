--[[
  finish.lua ends a lease that still holds, as its outcome says.

  KEYS[1..10] the queue's keys (see lib.lua)
  KEYS[11]    the key's HASH, ARGV[1].."k:"..key
  KEYS[12]    the key's LIST, ARGV[1].."v:"..key
  ARGV[1]     prefix of the queue's names; a dead letter is ARGV[1].."d:"..id
  ARGV[2]     key
  ARGV[3]     fence of the lease
  ARGV[4]     outcome: 1 ack, 2 drop, 3 retry, 4 defer, 5 hold
  ARGV[5]     delay of a retry or defer in microseconds, -1 for ever
  ARGV[6]     error of a drop
  Returns 1 if the key still has values, 0 if not, -1 if the lease lapsed,
  ended or was superseded (and nothing changed).
]]
-- @include lib.lua
return finish_lease(ARGV[2], KEYS[11], KEYS[12], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], now_us())
