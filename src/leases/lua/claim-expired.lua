--[[
  claim-expired: end the active leases whose expiresAt <= now and hand them to this caller only
  (each lease leaves the active zset inside this script, so exactly one caller across all bridge
  processes gets it and runs its teardown). Their teardowns are due (KEYS[2], stamped (now,
  claimant)); devices stay blocked until record-teardown.

  KEYS[1]  active zset (member lease id, score expiresAt ms)
  KEYS[2]  teardowns-due zset (member lease id, score: stamp time ms)

  ARGV[1]  now (ms)
  ARGV[2]  limit (max leases per call)
  ARGV[3]  key base (`<prefix>{leases}:`): lease hashes <base>lease:<id> — same hash tag as KEYS
  ARGV[4]  claimant of the teardowns' stamps ('' = none)

  Returns: an array of claimed leases, each as includes/lease-fields answers it (empty array when none).
]]
--- @include "includes/end-lease"
--- @include "includes/lease-fields"

local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local key = ARGV[3] .. 'lease:' .. id
  if redis.call('HGET', key, 'state') == 'active' then
    endLease(key, id, 'expired', ARGV[1], KEYS[2], ARGV[4])
    out[#out + 1] = readLease(key)
  end
end
return out
