--[[
  lease-of-device: the device's active lease, if any. Read-only.

  KEYS[1]  device hash (fields: lease, pending, fence)

  ARGV[1]  key base (`<prefix>{leases}:`): the lease hash is <base>lease:<id> — same hash tag

  Returns: the active lease as a flat field/value array, or 0.
]]
local id = redis.call('HGET', KEYS[1], 'lease')
if not id then return 0 end
local key = ARGV[1] .. 'lease:' .. id
if redis.call('HGET', key, 'state') ~= 'active' then return 0 end
return redis.call('HGETALL', key)
