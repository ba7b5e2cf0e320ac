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
  ARGV[6]  now (ms)
  ARGV[7]  key base (`<prefix>{leases}:`): the queues of other waiters, <base>q:<queueKey> and
           <base>qd:<queueKey> — same hash tag as KEYS
  ARGV[8]  tenant whose waiter quota applies ('' = no quota)
  ARGV[9]  that tenant's waiter quota

  Waiter quota: a waiter joining (not one already queued) while the tenant has ARGV[9] live waiters
  (their description in KEYS[5] names the tenant, they are still in their queue and their deadline
  has not passed) is refused, in this same step that would queue it, so waiters joining on several
  nodes at once cannot pass the quota together. The count reads every waiter description: waiters
  are few (every tenant's are capped).

  Returns: 1 when the waiter joined, 0 when it was already queued (deadline refreshed), {-5, live
  waiters of the tenant} when refused by the quota.
]]
local joined = 0
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if ARGV[8] ~= '' then
    local now = tonumber(ARGV[6])
    local quota = tonumber(ARGV[9])
    local held = 0
    local entries = redis.call('HGETALL', KEYS[5])
    for i = 1, #entries, 2 do
      local ok, info = pcall(cjson.decode, entries[i + 1])
      if ok and type(info) == 'table' and info.tenant == ARGV[8] and type(info.queueKey) == 'string' then
        local deadline = tonumber(redis.call('HGET', ARGV[7] .. 'qd:' .. info.queueKey, entries[i]))
        if deadline and deadline > now and redis.call('ZSCORE', ARGV[7] .. 'q:' .. info.queueKey, entries[i]) then
          held = held + 1
        end
      end
    end
    if held >= quota then return { -5, held } end
  end
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
