--[[
  lease-of-device: the device's active lease, if any. Read-only.

  KEYS[1]  device hash (fields: lease, fence)

  ARGV[1]  key base (`<prefix>{leases}:`): the lease hash is <base>lease:<id> — same hash tag

  Returns: the active lease as includes/lease-fields answers it, or 0.
]]
--- @include "includes/lease-fields"
local id = redis.call('HGET', KEYS[1], 'lease')
if not id then return 0 end
local lease = readLease(ARGV[1] .. 'lease:' .. id)
if lease[LF.state] ~= 'active' then return 0 end
return lease
