--[[
  renew: extend an active lease to a new expiresAt.

  KEYS[1]  lease hash
  KEYS[2]  active zset (member lease id, score expiresAt ms)

  ARGV[1]  now (ms)
  ARGV[2]  fencing token
  ARGV[3]  ttlSeconds
  ARGV[4]  new expiresAt (ms)

  Returns: the lease as a flat field/value array; -1 unknown lease; -2 ended (released, expired, or
  past expiresAt awaiting claim-expired); -3 fencing token mismatch.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local f = redis.call('HMGET', KEYS[1], 'state', 'expiresAt', 'fencingToken', 'id')
if f[1] ~= 'active' or tonumber(f[2]) <= tonumber(ARGV[1]) then return -2 end
if f[3] ~= ARGV[2] then return -3 end
redis.call('HSET', KEYS[1], 'expiresAt', ARGV[4], 'ttlSeconds', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], f[4])
return redis.call('HGETALL', KEYS[1])
