--[[
  liveHead(queue, deadlines, waiters, now): drop the waiters at the head of a queue whose deadline
  passed (stopping at the first live one; their descriptions in the hash `waiters` too) and return
  the live head's waiter id, or nil when none is left.
]]
--- @include "remove-waiter"
local function liveHead(queue, deadlines, waiters, now)
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then return nil end
    local deadline = tonumber(redis.call('HGET', deadlines, head))
    if deadline and deadline > now then return head end
    removeWaiter(queue, deadlines, waiters, head)
  end
end
