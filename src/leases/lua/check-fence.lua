--[[
  check-fence: is `lease` the device's active lease with exactly this fencing token? Read-only.

  KEYS[1]  lease hash
  KEYS[2]  device hash (fields: lease, pending, fence)

  ARGV[1]  device id
  ARGV[2]  fencing token
  ARGV[3]  now (ms)

  Returns: the lease as a flat field/value array; -1 unknown lease; -4 lease is on another device;
  -2 ended (or past expiresAt, or no longer the device's lease); -3 fencing token mismatch.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local f = redis.call('HMGET', KEYS[1], 'deviceId', 'state', 'expiresAt', 'fencingToken', 'id')
if f[1] ~= ARGV[1] then return -4 end
if f[2] ~= 'active' or tonumber(f[3]) <= tonumber(ARGV[3]) then return -2 end
if redis.call('HGET', KEYS[2], 'lease') ~= f[5] then return -2 end
if f[4] ~= ARGV[2] then return -3 end
return redis.call('HGETALL', KEYS[1])
