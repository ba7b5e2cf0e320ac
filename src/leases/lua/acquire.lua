--[[
  acquire: atomically lease the first free candidate device, honouring the selector's FIFO queue.

  KEYS[1]   active zset            (member lease id, score expiresAt ms)
  KEYS[2]   queue zset of queueKey (member waiterId, score arrival sequence)
  KEYS[3]   queue deadline hash    (waiterId -> deadline ms)
  KEYS[4]   the new lease's hash   (lease:<ARGV[3]>)
  KEYS[5]   waiter description hash (waiterId -> JSON): a waiter leaving the queue loses its entry
  KEYS[6..] device hashes of the candidates, in preference order (fields: lease, fence):
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
  ARGV[11..10+n] each candidate's fence floor, aligned with KEYS[6..] (n candidates): the highest
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

  Returns: {index into the candidates (1-based), fencing token} of the new lease (the caller knows
  every other field); 0 when no candidate is free or it is another waiter's turn.
]]
--- @include "includes/live-head"
--- @include "includes/remove-waiter"

local now = tonumber(ARGV[1])
local waiter = ARGV[9]

if ARGV[8] == '1' then
  local head = liveHead(KEYS[2], KEYS[3], KEYS[5], now)
  if head and head ~= waiter then return 0 end
end

for i = 6, #KEYS do
  local dev = KEYS[i]
  if redis.call('HEXISTS', dev, 'lease') == 0 then
    local counter = tonumber(redis.call('HGET', dev, 'fence'))
    local fence = counter and counter + 1 or now * 1000
    local floor = tonumber(ARGV[i + 5]) or 0
    if fence <= floor then fence = floor + 1 end
    -- As a decimal integer: a Lua number passed to Redis would be written in %.14g (rounded).
    fence = string.format('%.0f', fence)
    redis.call('HSET', dev, 'fence', fence, 'lease', ARGV[3])
    -- The id follows `<base>dev:` in the key, and #base = #KEYS[4] - #ARGV[3] - #'lease:'.
    local deviceId = string.sub(dev, #KEYS[4] - #ARGV[3] - 1)
    redis.call('HSET', KEYS[4],
      'id', ARGV[3], 'deviceId', deviceId, 'tenant', ARGV[4], 'holder', ARGV[5],
      'fencingToken', fence, 'acquiredAt', ARGV[1], 'expiresAt', ARGV[2], 'ttlSeconds', ARGV[6],
      'selector', ARGV[7], 'state', 'active')
    if ARGV[10] == '1' then redis.call('HSET', KEYS[4], 'keepApps', '1') end
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
    if ARGV[8] == '1' and waiter ~= '' then removeWaiter(KEYS[2], KEYS[3], KEYS[5], waiter) end
    return { i - 5, tonumber(fence) }
  end
end
return 0
