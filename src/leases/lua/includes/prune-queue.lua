--[[
  pruneQueue(queue, deadlines, waiters, queues, queueKey, now): drop every waiter of a queue whose
  deadline passed (and its description in the hash `waiters`), drop the queue when it is left empty,
  and return the number of live waiters.
]]
--- @include "remove-waiter"
--- @include "drop-empty-queue"
local function pruneQueue(queue, deadlines, waiters, queues, queueKey, now)
  local live = 0
  for _, waiter in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
    local deadline = tonumber(redis.call('HGET', deadlines, waiter))
    if deadline and deadline > now then
      live = live + 1
    else
      removeWaiter(queue, deadlines, waiters, waiter)
    end
  end
  dropEmptyQueue(queue, deadlines, queues, queueKey)
  return live
end
