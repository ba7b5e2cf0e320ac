--[[
  claim-expired: end the active leases whose expiresAt <= now and hand them to this caller only
  (each lease leaves the active zset inside this script, so exactly one caller across all bridge
  processes gets it and runs its teardown). Devices stay blocked (`pending`) until record-teardown.

  KEYS[1]  active zset (member lease id, score expiresAt ms)

  ARGV[1]  now (ms)
  ARGV[2]  limit (max leases per call)
  ARGV[3]  retention ms of ended lease records
  ARGV[4]  key base (`<prefix>{leases}:`): lease hashes <base>lease:<id>, device hashes
           <base>dev:<deviceId> — same hash tag as KEYS[1]

  Returns: an array of claimed leases, each as includes/lease-fields answers it (empty array when none).
]]
--- @include "includes/end-lease"
--- @include "includes/lease-fields"

local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local key = ARGV[4] .. 'lease:' .. id
  local f = redis.call('HMGET', key, 'state', 'deviceId')
  if f[1] == 'active' then
    endLease(key, id, f[2], 'expired', ARGV[1], ARGV[3], ARGV[4])
    out[#out + 1] = readLease(key)
  end
end
return out
