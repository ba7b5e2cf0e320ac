--[[
  dequeue: leave a selector's FIFO queue (wait ended, client gone). Idempotent.

  KEYS[1]  queue zset
  KEYS[2]  queue deadline hash
  KEYS[3]  set of queue keys that have waiters

  ARGV[1]  waiterId
  ARGV[2]  queueKey (member of KEYS[3])

  Returns: 1 when the waiter was queued, else 0.
]]
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
end
return removed
