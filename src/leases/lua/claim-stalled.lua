--[[
  claim-stalled: hand this caller the due teardowns whose stamp went stale — their run never finished
  (its node crashed or hung) or nobody ran them — each re-stamped (now, claimant) inside this script,
  so exactly one caller across all bridge processes gets each per stale period. A running teardown
  keeps its stamp fresh (touch-teardown).

  KEYS[1]  teardowns-due zset (member lease id, score: stamp time ms)

  ARGV[1]  now (ms)
  ARGV[2]  stale at or before (ms): now - staleMs
  ARGV[3]  limit (most entries per call)
  ARGV[4]  claimant (the new stamp's)
  ARGV[5]  key base (`<prefix>{leases}:`): lease hashes <base>lease:<id>, whose field `teardownBy`
           is the stamp's claimant — same hash tag as KEYS[1]
  ARGV[6]  claimant prefix ('' = none): also take, however recent their stamp, the entries whose
           claimant starts with it and is not ARGV[4] (what an earlier process of the same node
           was running when it crashed)

  Returns: an array of {lease as includes/lease-fields answers it, the replaced stamp's claimant
  ('' = none), the replaced stamp's time (ms)}: the stale entries oldest stamp first, then those of
  the prefix. An entry whose lease hash is gone (or active again) is dropped, not answered.
]]
--- @include "includes/lease-fields"

local out = {}
local limit = tonumber(ARGV[3])

local function take(id, at)
  local key = ARGV[5] .. 'lease:' .. id
  local lease = readLease(key)
  if not lease[LF.id] or lease[LF.state] == 'active' then
    redis.call('ZREM', KEYS[1], id)
    return
  end
  local by = redis.call('HGET', key, 'teardownBy') or ''
  redis.call('ZADD', KEYS[1], ARGV[1], id)
  redis.call('HSET', key, 'teardownBy', ARGV[4])
  out[#out + 1] = { lease, by, at }
end

if limit <= 0 then return out end
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #stale, 2 do take(stale[i], stale[i + 1]) end

local prefix = ARGV[6]
if prefix ~= '' and #out < limit then
  -- Entries taken above carry ARGV[4] now: skipped here.
  local recent = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[2], '+inf', 'WITHSCORES')
  for i = 1, #recent, 2 do
    if #out >= limit then break end
    local by = redis.call('HGET', ARGV[5] .. 'lease:' .. recent[i], 'teardownBy') or ''
    if by ~= ARGV[4] and string.sub(by, 1, #prefix) == prefix then take(recent[i], recent[i + 1]) end
  end
end
return out
