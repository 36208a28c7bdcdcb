--[[
  redrive.lua appends the values of a dead letter to the tail of its key,
  ready at once, and removes the dead letter.

  KEYS[1]     the queue's ready (see lib.lua)
  ARGV[1]     prefix of the queue's names; the dead letter is
              ARGV[1].."d:"..ARGV[2]
  ARGV[2]     id of the dead letter
  Returns FOLDING if Adds are left to fold; otherwise 1, or 0 if there is
  no such dead letter.
]]
-- @include lib.lua
local now, now_s = clock()
if not fold() then
  return FOLDING
end
local dk = PFX .. 'd:' .. ARGV[2]
local d = rcall('LRANGE', dk, '0', '-1')
if #d == 0 then
  return 0
end
rcall('DEL', dk)
rcall('ZREM', K_DEAD, ARGV[2])
rcall('ZREM', K_DEADAT, ARGV[2])
local t = now_s .. ':'
local vals = {}
for i = 5, #d do
  local v = d[i]
  vals[#vals + 1] = t .. string.sub(v, string.find(v, ':', 1, true) + 1)
end
if #vals > 0 then
  local key = d[1]
  append(key, PFX .. 'k:' .. key, PFX .. 'v:' .. key, vals, now, now_s)
end
return 1
