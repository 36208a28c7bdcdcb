--[[
  pausequeue.lua pauses the queue, or resumes it: while the queue's paused
  is set, claim_ready leases nothing. Resuming wakes a waiting worker,
  whose Claim passes the wake-up on while keys are left ready.

  KEYS[1]     the queue's paused (see lib.lua)
  ARGV[1]     prefix of the queue's names
  ARGV[2]     1 to pause, 0 to resume
  Returns 1 if that changed the queue (it was running, or paused), 0 if
  not.
]]
-- @include lib.lua
if ARGV[2] == '1' then
  if rcall('SET', KEYS[1], '1', 'NX') then
    feature_on()
    return 1
  end
  return 0
end
if rcall('DEL', KEYS[1]) == 0 then
  return 0
end
wake()
return 1
