--[[
  check-fence: is `lease` the device's active lease with exactly this fencing token? Read-only.

  KEYS[1]  lease hash
  KEYS[2]  device hash (fields: lease, fence)

  ARGV[1]  device id
  ARGV[2]  fencing token
  ARGV[3]  now (ms)

  Returns: the lease as includes/lease-fields answers it; -1 unknown lease; -4 lease is on another device;
  -2 ended (or past expiresAt, or no longer the device's lease); -3 fencing token mismatch.
]]
--- @include "includes/lease-fields"
local lease = readLease(KEYS[1])
if not lease[LF.id] then return -1 end
if lease[LF.deviceId] ~= ARGV[1] then return -4 end
if lease[LF.state] ~= 'active' or tonumber(lease[LF.expiresAt]) <= tonumber(ARGV[3]) then return -2 end
if redis.call('HGET', KEYS[2], 'lease') ~= lease[LF.id] then return -2 end
if lease[LF.fencingToken] ~= ARGV[2] then return -3 end
return lease
