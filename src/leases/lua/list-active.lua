--[[
  list-active: the active leases (optionally of one tenant), a consistent snapshot. Read-only.

  KEYS[1]  active zset

  ARGV[1]  key base (`<prefix>{leases}:`): lease hashes <base>lease:<id> — same hash tag
  ARGV[2]  tenant ('' = every tenant)

  Returns: an array of leases, each as includes/lease-fields answers it.
]]
--- @include "includes/lease-fields"
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local lease = readLease(ARGV[1] .. 'lease:' .. id)
  if lease[LF.state] == 'active' and (ARGV[2] == '' or lease[LF.tenant] == ARGV[2]) then
    out[#out + 1] = lease
  end
end
return out
