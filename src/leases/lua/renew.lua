--[[
  renew: extend an active lease to a new expiresAt.

  KEYS[1]  lease hash
  KEYS[2]  active zset (member lease id, score expiresAt ms)

  ARGV[1]  now (ms)
  ARGV[2]  fencing token
  ARGV[3]  ttlSeconds
  ARGV[4]  new expiresAt (ms)

  Returns: the lease as includes/lease-fields answers it; -1 unknown lease; -2 ended (released, expired, or
  past expiresAt awaiting claim-expired); -3 fencing token mismatch.
]]
--- @include "includes/lease-fields"
local lease = readLease(KEYS[1])
if not lease[LF.id] then return -1 end
if lease[LF.state] ~= 'active' or tonumber(lease[LF.expiresAt]) <= tonumber(ARGV[1]) then return -2 end
if lease[LF.fencingToken] ~= ARGV[2] then return -3 end
redis.call('HSET', KEYS[1], 'expiresAt', ARGV[4], 'ttlSeconds', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], lease[LF.id])
lease[LF.expiresAt] = ARGV[4]
lease[LF.ttlSeconds] = ARGV[3]
return lease
