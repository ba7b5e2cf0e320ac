--[[
  enqueue: join the FIFO queue of a selector, or refresh the deadline of a waiter already in it
  (it keeps its place). A waiter that stops refreshing is dropped once its deadline passes.

  KEYS[1]  queue zset (member waiterId, score arrival sequence)
  KEYS[2]  queue deadline hash (waiterId -> deadline ms)
  KEYS[3]  set of queue keys that have waiters
  KEYS[4]  arrival sequence counter
  KEYS[5]  waiter description hash (waiterId -> JSON), for listing waiters

  ARGV[1]  waiterId
  ARGV[2]  deadline (ms)
  ARGV[3]  queueKey (member of KEYS[3])
  ARGV[4]  ttl ms: both queue keys (and the description hash) live at least this long
  ARGV[5]  the waiter's description JSON ('' = none): written when it joins

  Returns: 1 when the waiter joined, 0 when it was already queued (deadline refreshed).
]]
local joined = 0
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], redis.call('INCR', KEYS[4]), ARGV[1])
  joined = 1
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[5], ARGV[1], ARGV[5]) end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
local ttl = tonumber(ARGV[4])
for i = 1, 2 do
  local left = redis.call('PTTL', KEYS[i])
  if left < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
if ARGV[5] ~= '' then
  local left = redis.call('PTTL', KEYS[5])
  if left < ttl then redis.call('PEXPIRE', KEYS[5], ttl) end
end
return joined
