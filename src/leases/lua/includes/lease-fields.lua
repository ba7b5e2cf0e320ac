--[[
  The lease as every lease script answers it: the values of the lease hash's fields in the order of
  LEASE_FIELDS, false (nil in the reply) for a field the hash lacks. The same list, in the same
  order, is LEASE_FIELDS in redis-store.ts, whose leaseFromReply is the one decoder (a unit test
  compares the two lists). One value per field, no field names: half the reply of HGETALL.

  readLease(key): that array for the lease hash `key`; its first value (the id) is false when there
  is no such lease.
  LF: the position of each field in it (LF.state, LF.endedAt, …).
]]
local LEASE_FIELDS = {
  'id', 'deviceId', 'tenant', 'holder', 'fencingToken', 'acquiredAt', 'expiresAt', 'ttlSeconds',
  'selector', 'state', 'endedAt', 'keepApps',
}
local LF = {}
for i, name in ipairs(LEASE_FIELDS) do LF[name] = i end

local function readLease(key)
  return redis.call('HMGET', key, unpack(LEASE_FIELDS))
end
