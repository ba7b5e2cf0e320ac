--[[
  markEnded(leaseKey, state, now, retentionMs): mark a lease hash ended ('released' or 'expired') at
  `now` and keep its record for the retention — for a lease whose teardown is recorded in the same
  step (release-empty).

  endLease(leaseKey, leaseId, state, now, due, claimant): mark an active lease ended and its teardown
  due: its id enters the teardowns-due zset `due` (score: the stamp time, `now`) and its hash's field
  `teardownBy` holds the stamp's claimant. Its device keeps pointing at it until record-teardown
  (nobody acquires the device while the teardown runs, or after it never finished), which also takes
  it out of `due` and gives the lease hash its retention: a lease whose teardown is due never
  expires. The caller removes the lease from the active zset.
]]
local function markEnded(leaseKey, state, now, retentionMs)
  redis.call('HSET', leaseKey, 'state', state, 'endedAt', now)
  redis.call('PEXPIRE', leaseKey, retentionMs)
end

local function endLease(leaseKey, leaseId, state, now, due, claimant)
  redis.call('HSET', leaseKey, 'state', state, 'endedAt', now, 'teardownBy', claimant)
  redis.call('ZADD', due, now, leaseId)
end
