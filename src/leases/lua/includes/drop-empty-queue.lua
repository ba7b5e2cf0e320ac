--[[
  dropEmptyQueue(queue, deadlines, queues, queueKey): when a queue has no waiter left, delete its
  two keys and remove `queueKey` from the set of queues that have waiters.
]]
local function dropEmptyQueue(queue, deadlines, queues, queueKey)
  if redis.call('ZCARD', queue) == 0 then
    redis.call('DEL', queue, deadlines)
    redis.call('SREM', queues, queueKey)
  end
end
