--[[
  waiting: count live waiters (of one queue, or of all), dropping those whose deadline passed.

  KEYS[1]  set of queue keys that have waiters
  KEYS[2]  waiter description hash (waiterId -> JSON): pruned waiters lose their entries

  ARGV[1]  now (ms)
  ARGV[2]  key base (`<prefix>{leases}:`): queue zset <base>q:<queueKey>, deadline hash
           <base>qd:<queueKey> — same hash tag as KEYS[1]
  ARGV[3]  queueKey ('' = every queue)

  Returns: the number of live waiters.
]]
--- @include "includes/prune-queue"

local now = tonumber(ARGV[1])
local queues
if ARGV[3] ~= '' then queues = { ARGV[3] } else queues = redis.call('SMEMBERS', KEYS[1]) end
local count = 0
for _, qk in ipairs(queues) do
  count = count + pruneQueue(ARGV[2] .. 'q:' .. qk, ARGV[2] .. 'qd:' .. qk, KEYS[2], KEYS[1], qk, now)
end
return count
