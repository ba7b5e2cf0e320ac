--[[
  release: end an active lease. Its teardown is due (in KEYS[3], stamped (now, claimant)) and the
  device keeps pointing at it until record-teardown, so nobody acquires the device while teardown
  runs (or after it never finished: it is run again, see claim-stalled).

  KEYS[1]  lease hash
  KEYS[2]  active zset
  KEYS[3]  teardowns-due zset (member lease id, score: stamp time ms)

  ARGV[1]  now (ms)
  ARGV[2]  fencing token ('' = do not check)
  ARGV[3]  claimant of the teardown's stamp ('' = none: the node that runs it stamps it)

  Returns: the ended lease as includes/lease-fields answers it (state and endedAt updated); 0 when unknown or not active; -3 fencing token mismatch.
]]
--- @include "includes/end-lease"
--- @include "includes/read-for-release"

local lease = readForRelease(KEYS[1], ARGV[2])
if type(lease) == 'number' then return lease end
local id = lease[LF.id]
endLease(KEYS[1], id, 'released', ARGV[1], KEYS[3], ARGV[3])
redis.call('ZREM', KEYS[2], id)
replyReleased(lease, ARGV[1])
return lease
