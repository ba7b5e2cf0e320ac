--[[
  Both also take the lease out of its tenant's set of active leases (`<base>tl:<tenant>`, which
  acquire.lua counts against the tenant's lease quota; base is the lease key without `lease:<id>`).

  markEnded(leaseKey, leaseId, state, now, retentionMs): mark a lease hash ended ('released' or 'expired') at
  `now` and keep its record for the retention — for a lease whose teardown is recorded in the same
  step (release-empty).

  endLease(leaseKey, leaseId, state, now, due, claimant): mark an active lease ended and its teardown
  due: its id enters the teardowns-due zset `due` (score: the stamp time, `now`) and its hash's field
  `teardownBy` holds the stamp's claimant. Its device keeps pointing at it until record-teardown
  (nobody acquires the device while the teardown runs, or after it never finished), which also takes
  it out of `due` and gives the lease hash its retention: a lease whose teardown is due never
  expires. The caller removes the lease from the active zset.
]]
local function forgetTenantLease(leaseKey, leaseId)
  local tenant = redis.call('HGET', leaseKey, 'tenant')
  if not tenant then return end
  local base = string.sub(leaseKey, 1, #leaseKey - #leaseId - #'lease:')
  redis.call('SREM', base .. 'tl:' .. tenant, leaseId)
end

local function markEnded(leaseKey, leaseId, state, now, retentionMs)
  forgetTenantLease(leaseKey, leaseId)
  redis.call('HSET', leaseKey, 'state', state, 'endedAt', now)
  redis.call('PEXPIRE', leaseKey, retentionMs)
end

local function endLease(leaseKey, leaseId, state, now, due, claimant)
  forgetTenantLease(leaseKey, leaseId)
  redis.call('HSET', leaseKey, 'state', state, 'endedAt', now, 'teardownBy', claimant)
  redis.call('ZADD', due, now, leaseId)
end
