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

  Returns: the ended lease as a flat field/value array; 0 when unknown or not active; -3 fencing
  token mismatch.
]]
--- @include "includes/end-lease"

if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local f = redis.call('HMGET', KEYS[1], 'state', 'fencingToken', 'id', 'deviceId')
if f[1] ~= 'active' then return 0 end
if ARGV[2] ~= '' and f[2] ~= ARGV[2] then return -3 end
endLease(KEYS[1], f[3], f[4], 'released', ARGV[1], ARGV[3], ARGV[4])
redis.call('ZREM', KEYS[2], f[3])
return redis.call('HGETALL', KEYS[1])
