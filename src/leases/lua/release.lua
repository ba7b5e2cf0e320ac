--[[
  release: end an active lease. The device keeps pointing at it (`pending` = now) until
  record-teardown, so nobody acquires the device while teardown runs.

  KEYS[1]  lease hash
  KEYS[2]  active zset

  ARGV[1]  now (ms)
  ARGV[2]  fencing token ('' = do not check)
  ARGV[3]  retention ms of the ended lease record
  ARGV[4]  key base (`<prefix>{leases}:`): the device hash is <base>dev:<deviceId>, read from the
           lease — same hash tag, so the same Cluster slot as KEYS

  Returns: the ended lease as includes/lease-fields answers it (state and endedAt updated); 0 when unknown or not active; -3 fencing token mismatch.
]]
--- @include "includes/end-lease"
--- @include "includes/read-for-release"

local lease = readForRelease(KEYS[1], ARGV[2])
if type(lease) == 'number' then return lease end
local id = lease[LF.id]
endLease(KEYS[1], id, lease[LF.deviceId], 'released', ARGV[1], ARGV[3], ARGV[4])
redis.call('ZREM', KEYS[2], id)
replyReleased(lease, ARGV[1])
return lease
