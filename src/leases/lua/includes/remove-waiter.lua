--[[
  removeWaiter(queue, deadlines, waiterId): take a waiter out of a selector's FIFO queue (zset by
  arrival) and its deadline hash. Returns 1 when it was queued, else 0.
]]
local function removeWaiter(queue, deadlines, waiterId)
  local removed = redis.call('ZREM', queue, waiterId)
  redis.call('HDEL', deadlines, waiterId)
  return removed
end
