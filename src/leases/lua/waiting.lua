--[[
  waiting: count live waiters (of one queue, or of all), dropping those whose deadline passed.

  KEYS[1]  set of queue keys that have waiters

  ARGV[1]  now (ms)
  ARGV[2]  key base (`<prefix>{leases}:`): queue zset <base>q:<queueKey>, deadline hash
           <base>qd:<queueKey> — same hash tag as KEYS[1]
  ARGV[3]  queueKey ('' = every queue)

  Returns: the number of live waiters.
]]
local now = tonumber(ARGV[1])
local queues
if ARGV[3] ~= '' then queues = { ARGV[3] } else queues = redis.call('SMEMBERS', KEYS[1]) end
local count = 0
for _, qk in ipairs(queues) do
  local q = ARGV[2] .. 'q:' .. qk
  local qd = ARGV[2] .. 'qd:' .. qk
  for _, waiter in ipairs(redis.call('ZRANGE', q, 0, -1)) do
    local deadline = tonumber(redis.call('HGET', qd, waiter))
    if deadline and deadline > now then
      count = count + 1
    else
      redis.call('ZREM', q, waiter)
      redis.call('HDEL', qd, waiter)
    end
  end
  if redis.call('ZCARD', q) == 0 then
    redis.call('DEL', q, qd)
    redis.call('SREM', KEYS[1], qk)
  end
end
return count
