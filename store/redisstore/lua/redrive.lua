--[[
  redrive.lua appends the values of a dead letter to the tail of its key,
  ready at once, and removes the dead letter.

  KEYS[1..10] the queue's keys (see lib.lua); the names of the dead letter
              and of its key are built from ARGV[1], in the same hash slot
  ARGV[1]     prefix of the queue's names
  ARGV[2]     id of the dead letter
  Returns 1, or 0 if there is no such dead letter.
]]
-- @include lib.lua
local dk = PFX .. 'd:' .. ARGV[2]
local d = rcall('LRANGE', dk, 0, -1)
if #d == 0 then
  return 0
end
rcall('DEL', dk)
rcall('ZREM', K_DEAD, ARGV[2])
rcall('ZREM', K_DEADAT, ARGV[2])
local now = now_us()
local t = string.format('%d', now) .. ':'
local vals = {}
for i = 5, #d do
  local v = d[i]
  vals[#vals + 1] = t .. string.sub(v, string.find(v, ':', 1, true) + 1)
end
if #vals > 0 then
  local key = d[1]
  append(key, PFX .. 'k:' .. key, PFX .. 'v:' .. key, vals, now)
end
return 1
