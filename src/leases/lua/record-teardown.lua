--[[
  record-teardown: store what a lease's teardown did, index it in the history of ended leases
  (globally and per tenant: newest first, trimmed by age and count in batches, see
  includes/index-teardown), take it out of the teardowns due (the lease hash then expires after the
  retention), and free its device (unless the lease is somehow still active, or the device already
  moved on to another lease); when it freed the device and some selector queue has waiters, publish
  the wake-up (in the same round trip — a release nobody waits for publishes nothing).

  KEYS[1]  teardown record key (string, JSON)
  KEYS[2]  device hash (fields: lease, fence)
  KEYS[3]  lease hash
  KEYS[4]  set of queue keys that have waiters
  KEYS[5]  teardown index zset (every tenant): lease id by time recorded
  KEYS[6]  teardowns-due zset (member lease id, score: stamp time ms)

  ARGV[1]  record JSON
  ARGV[2]  lease id
  ARGV[3]  retention ms of the record and of the ended lease hash
  ARGV[4]  wake-up pub/sub channel
  ARGV[5]  now (ms)
  ARGV[6]  key base (`<prefix>{leases}:`): the tenant's index is <base>tdi:<tenant> — same hash tag
  ARGV[7]  most entries an index keeps after a trim

  Returns: 1 when the device was freed, else 0.
]]
--- @include "includes/index-teardown"

redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
local max = tonumber(ARGV[7])
indexTeardown(KEYS[5], ARGV[2], ARGV[5], ARGV[3], max)
local lease = redis.call('HMGET', KEYS[3], 'tenant', 'state')
if lease[1] then indexTeardown(ARGV[6] .. 'tdi:' .. lease[1], ARGV[2], ARGV[5], ARGV[3], max) end
if lease[2] == 'active' then return 0 end
redis.call('ZREM', KEYS[6], ARGV[2])
if lease[2] then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
if redis.call('HGET', KEYS[2], 'lease') ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], 'lease')
if redis.call('SCARD', KEYS[4]) > 0 then redis.call('PUBLISH', ARGV[4], '1') end
return 1
