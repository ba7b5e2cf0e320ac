--[[
  list-active: the active leases (optionally of one tenant), a consistent snapshot. Read-only.

  KEYS[1]  active zset

  ARGV[1]  key base (`<prefix>{leases}:`): lease hashes <base>lease:<id> — same hash tag
  ARGV[2]  tenant ('' = every tenant)

  Returns: an array of leases, each a flat field/value array.
]]
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1] .. 'lease:' .. id
  local f = redis.call('HMGET', key, 'state', 'tenant')
  if f[1] == 'active' and (ARGV[2] == '' or f[2] == ARGV[2]) then
    out[#out + 1] = redis.call('HGETALL', key)
  end
end
return out
