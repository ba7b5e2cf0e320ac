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

  Returns: the ended lease as a flat field/value array (as HGETALL would answer after the end: state
  and endedAt updated); 0 when unknown or not active; -3 fencing token mismatch.
]]
--- @include "includes/end-lease"

-- One read of the lease (its fields for the checks and for the reply), not EXISTS + HMGET + HGETALL.
local all = redis.call('HGETALL', KEYS[1])
if #all == 0 then return 0 end
local f = {}
for i = 1, #all, 2 do f[all[i]] = i end
if all[f.state + 1] ~= 'active' then return 0 end
if ARGV[2] ~= '' and all[f.fencingToken + 1] ~= ARGV[2] then return -3 end
local id = all[f.id + 1]
endLease(KEYS[1], id, all[f.deviceId + 1], 'released', ARGV[1], ARGV[3], ARGV[4])
redis.call('ZREM', KEYS[2], id)
all[f.state + 1] = 'released'
if f.endedAt then
  all[f.endedAt + 1] = ARGV[1]
else
  all[#all + 1] = 'endedAt'
  all[#all + 1] = ARGV[1]
end
return all
