--[[
  acquire: atomically lease the first free candidate device, honouring the selector's FIFO queue.

  KEYS[1]   active zset            (member lease id, score expiresAt ms)
  KEYS[2]   queue zset of queueKey (member waiterId, score arrival sequence)
  KEYS[3]   queue deadline hash    (waiterId -> deadline ms)
  KEYS[4]   the new lease's hash   (lease:<ARGV[3]>)
  KEYS[5]   waiter description hash (waiterId -> JSON): a waiter leaving the queue loses its entry
  KEYS[6]   the tenant's set of active lease ids (`<base>tl:<tenant>`): the new lease joins it;
            every way a lease ends leaves it (includes/end-lease)
  KEYS[7..] device hashes of the candidates, in preference order (fields: lease, fence):
            `<base>dev:<deviceId>`, where KEYS[4] is `<base>lease:<ARGV[3]>` — the winner's device id
            is read off its key, so the ids are not sent a second time

  ARGV[1]   now (ms, the client's clock)
  ARGV[2]   expiresAt (ms)
  ARGV[3]   new lease id
  ARGV[4]   tenant
  ARGV[5]   holder
  ARGV[6]   ttlSeconds
  ARGV[7]   selector JSON
  ARGV[8]   '1' when a queue applies (KEYS[2], KEYS[3] are meaningful), else '0'
  ARGV[9]   waiterId ('' = none)
  ARGV[10]  '1' when the lease keeps the apps installed during it (field keepApps), else '0'
  ARGV[11]  the tenant's lease quota ('' = none): with KEYS[6] holding that many active leases, refuse
  ARGV[12..11+n] each candidate's fence floor, aligned with KEYS[7..] (n candidates): the highest
                 token the calling node has seen for it ('0' = none). The counter never goes back
                 below it.

  Fencing tokens: a device's counter starts at now (ARGV[1]) in microseconds (now * 1000) when it
  has none — its first lease, or the first after Redis lost its data (restarted empty, a flush) —
  and goes up by one per lease. So any node's next token after a loss is above every token handed
  out before, as long as the device took fewer than one lease per microsecond on average since its
  counter started and the nodes' clocks agree (as lease expiry already needs) to within that
  margin. Tokens are stored and answered as decimal integers (below 2^53 until the year 2255).

  A device is free when its hash has no `lease`. An ended lease keeps it until record-teardown
  clears it, however long that takes: a teardown that never finished must be run again, never
  skipped by time (the next tenant would get a device not reset). An active lease past expiresAt
  still blocks until claim-expired ends it.
  When the queue (after dropping waiters whose deadline passed) is non-empty, only its head waiter
  may acquire; on success that waiter leaves the queue.

  Tenant quota: checked first (before the queue and the candidates), in this same step that grants,
  so grants racing on several nodes cannot pass it together. When the set is at the quota, members
  whose lease hash is no longer active (a record lost with Redis data) are dropped and it is counted
  again.

  Returns: {index into the candidates (1-based), fencing token} of the new lease (the caller knows
  every other field); {-5, leases held} when the tenant holds its quota; 0 when no candidate is
  free or it is another waiter's turn.
]]
--- @include "includes/live-head"
--- @include "includes/remove-waiter"

local now = tonumber(ARGV[1])
local waiter = ARGV[9]
-- `<base>` of every key: KEYS[4] is `<base>lease:<ARGV[3]>`.
local base = string.sub(KEYS[4], 1, #KEYS[4] - #ARGV[3] - #'lease:')

local quota = tonumber(ARGV[11])
if quota then
  local held = redis.call('SCARD', KEYS[6])
  if held >= quota then
    for _, id in ipairs(redis.call('SMEMBERS', KEYS[6])) do
      if redis.call('HGET', base .. 'lease:' .. id, 'state') ~= 'active' then
        redis.call('SREM', KEYS[6], id)
      end
    end
    held = redis.call('SCARD', KEYS[6])
    if held >= quota then return { -5, held } end
  end
end

if ARGV[8] == '1' then
  local head = liveHead(KEYS[2], KEYS[3], KEYS[5], now)
  if head and head ~= waiter then return 0 end
end

for i = 7, #KEYS do
  local dev = KEYS[i]
  if redis.call('HEXISTS', dev, 'lease') == 0 then
    local counter = tonumber(redis.call('HGET', dev, 'fence'))
    local fence = counter and counter + 1 or now * 1000
    local floor = tonumber(ARGV[i + 5]) or 0
    if fence <= floor then fence = floor + 1 end
    -- As a decimal integer: a Lua number passed to Redis would be written in %.14g (rounded).
    fence = string.format('%.0f', fence)
    redis.call('HSET', dev, 'fence', fence, 'lease', ARGV[3])
    local deviceId = string.sub(dev, #base + #'dev:' + 1)
    redis.call('HSET', KEYS[4],
      'id', ARGV[3], 'deviceId', deviceId, 'tenant', ARGV[4], 'holder', ARGV[5],
      'fencingToken', fence, 'acquiredAt', ARGV[1], 'expiresAt', ARGV[2], 'ttlSeconds', ARGV[6],
      'selector', ARGV[7], 'state', 'active')
    if ARGV[10] == '1' then redis.call('HSET', KEYS[4], 'keepApps', '1') end
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
    redis.call('SADD', KEYS[6], ARGV[3])
    if ARGV[8] == '1' and waiter ~= '' then removeWaiter(KEYS[2], KEYS[3], KEYS[5], waiter) end
    return { i - 6, tonumber(fence) }
  end
end
return 0
