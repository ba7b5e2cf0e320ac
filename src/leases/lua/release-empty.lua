--[[
  release-empty: end an active lease and record its (empty) teardown in one step — release and
  record-teardown fused — when the caller knows the teardown has nothing to undo: the node that
  drives the device holds nothing of the lease. Checked here: the lease is on the device the caller
  named, and no device-state journal exists for it (a helper journaled something teardown must
  restore). When either check fails, the lease ends exactly as `release` ends it (its teardown due,
  stamped (now, ARGV[9]), the device blocked until record-teardown) and the caller runs the
  teardown.

  KEYS[1]  lease hash
  KEYS[2]  active zset
  KEYS[3]  teardown record key (string, JSON)
  KEYS[4]  the lease's device-state journal hash (ds:<leaseId>)
  KEYS[5]  set of queue keys that have waiters
  KEYS[6]  teardown index zset (every tenant)
  KEYS[7]  teardowns-due zset (member lease id, score: stamp time ms)

  ARGV[1]  now (ms)
  ARGV[2]  fencing token ('' = do not check)
  ARGV[3]  retention ms of the ended lease record and of the teardown record
  ARGV[4]  key base (`<prefix>{leases}:`): device hash <base>dev:<deviceId>, the tenant's index
           <base>tdi:<tenant> — same hash tag, so the same Cluster slot as KEYS
  ARGV[5]  the device id the caller expects the lease on
  ARGV[6]  teardown record JSON (written only on the fused path)
  ARGV[7]  wake-up pub/sub channel
  ARGV[8]  most entries a teardown index keeps after a trim
  ARGV[9]  claimant of the teardown's stamp when the lease ends pending ('' = none)

  Returns: {1, lease} when the teardown was recorded (the device freed unless it moved on to
  another lease, the wake-up published when it freed it while a queue has waiters), {0, lease} when
  the lease ended pending its teardown; lease is the ended lease as includes/lease-fields answers
  it (as in release.lua). 0 when unknown or not active; -3 fencing token mismatch.
]]
--- @include "includes/end-lease"
--- @include "includes/index-teardown"
--- @include "includes/read-for-release"

local lease = readForRelease(KEYS[1], ARGV[2])
if type(lease) == 'number' then return lease end
local id = lease[LF.id]
local deviceId = lease[LF.deviceId]
redis.call('ZREM', KEYS[2], id)
replyReleased(lease, ARGV[1])

if deviceId ~= ARGV[5] or redis.call('EXISTS', KEYS[4]) == 1 then
  endLease(KEYS[1], id, 'released', ARGV[1], KEYS[7], ARGV[9])
  return { 0, lease }
end

local max = tonumber(ARGV[8])
markEnded(KEYS[1], id, 'released', ARGV[1], ARGV[3])
redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[3])
indexTeardown(KEYS[6], id, ARGV[1], ARGV[3], max)
if lease[LF.tenant] then indexTeardown(ARGV[4] .. 'tdi:' .. lease[LF.tenant], id, ARGV[1], ARGV[3], max) end
local dev = ARGV[4] .. 'dev:' .. deviceId
if redis.call('HGET', dev, 'lease') == id then
  redis.call('HDEL', dev, 'lease')
  if redis.call('SCARD', KEYS[5]) > 0 then redis.call('PUBLISH', ARGV[7], '1') end
end
return { 1, lease }
