--[[
  removeWaiter(queue, deadlines, waiters, waiterId): take a waiter out of a selector's FIFO queue
  (zset by arrival), its deadline hash and the waiter description hash `waiters` (every way a waiter
  leaves comes here, so descriptions do not outlive their waiters). Returns 1 when it was queued,
  else 0.
]]
local function removeWaiter(queue, deadlines, waiters, waiterId)
  local removed = redis.call('ZREM', queue, waiterId)
  redis.call('HDEL', deadlines, waiterId)
  redis.call('HDEL', waiters, waiterId)
  return removed
end
