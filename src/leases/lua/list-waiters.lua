--[[
  list-waiters: every live waiter with its place in its selector's queue, dropping waiters whose
  deadline passed and the descriptions of waiters that left their queue (acquired, gave up).

  KEYS[1]  waiter description hash (waiterId -> JSON {queueKey, selector, tenant, node, since})
  KEYS[2]  set of queue keys that have waiters

  ARGV[1]  now (ms)
  ARGV[2]  key base (`<prefix>{leases}:`): queue zset <base>q:<queueKey>, deadline hash
           <base>qd:<queueKey> — same hash tag as KEYS[1]
  ARGV[3]  tenant ('' = every tenant)

  Returns: a flat array {waiterId, position (1 = head), description JSON, ...} of the live waiters.
]]
--- @include "includes/prune-queue"

local now = tonumber(ARGV[1])
local pruned = {}
local out = {}
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local id = entries[i]
  local ok, info = pcall(cjson.decode, entries[i + 1])
  local qk = ok and type(info) == 'table' and info.queueKey or nil
  if type(qk) ~= 'string' then
    redis.call('HDEL', KEYS[1], id)
  else
    local queue = ARGV[2] .. 'q:' .. qk
    if not pruned[qk] then
      pruneQueue(queue, ARGV[2] .. 'qd:' .. qk, KEYS[1], KEYS[2], qk, now)
      pruned[qk] = true
    end
    local rank = redis.call('ZRANK', queue, id)
    if not rank then
      redis.call('HDEL', KEYS[1], id)
    elseif ARGV[3] == '' or info.tenant == ARGV[3] then
      out[#out + 1] = id
      out[#out + 1] = rank + 1
      out[#out + 1] = entries[i + 1]
    end
  end
end
return out
