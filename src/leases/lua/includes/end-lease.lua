--[[
  markEnded(leaseKey, state, now, retentionMs): mark a lease hash ended ('released' or 'expired') at
  `now` and keep its record for the retention.

  endLease(leaseKey, leaseId, deviceId, state, now, retentionMs, base): mark an active lease ended
  and leave its device blocked (`pending` = now) until record-teardown — only when the device still
  points at this lease. The caller removes the lease from the active zset.
  `base` is the key base `<prefix>{leases}:` (device hash <base>dev:<deviceId>).
]]
local function markEnded(leaseKey, state, now, retentionMs)
  redis.call('HSET', leaseKey, 'state', state, 'endedAt', now)
  redis.call('PEXPIRE', leaseKey, retentionMs)
end

local function endLease(leaseKey, leaseId, deviceId, state, now, retentionMs, base)
  markEnded(leaseKey, state, now, retentionMs)
  local dev = base .. 'dev:' .. deviceId
  if redis.call('HGET', dev, 'lease') == leaseId then
    redis.call('HSET', dev, 'pending', now)
  end
end
