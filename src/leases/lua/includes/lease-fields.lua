--[[
  The lease as every lease script answers it: the values of the lease hash's fields in the order of
  LEASE_FIELDS, false (nil in the reply) for a field the hash lacks. The same list, in the same
  order, is LEASE_FIELDS in redis-store.ts, whose leaseFromReply is the one decoder (a unit test
  compares the two lists, and LF with them). One value per field, no field names: half the reply of
  HGETALL.

  readLease(key): that array for the lease hash `key`; its first value (the id) is false when there
  is no such lease.
  LF: the position of each field in it (LF.state, LF.endedAt, …).

  Both are literals: this fragment runs on every call of the scripts that include it, and a list
  turned into LF by a loop (plus unpack per read) rebuilt and grew two tables per call.
]]
local function readLease(key)
  return redis.call('HMGET', key, 'id', 'deviceId', 'tenant', 'holder', 'fencingToken', 'acquiredAt',
    'expiresAt', 'ttlSeconds', 'selector', 'state', 'endedAt', 'keepApps')
end
local LF = {
  id = 1, deviceId = 2, tenant = 3, holder = 4, fencingToken = 5, acquiredAt = 6, expiresAt = 7,
  ttlSeconds = 8, selector = 9, state = 10, endedAt = 11, keepApps = 12,
}
