--[[
  indexTeardown(key, leaseId, now, retentionMs, max): add a recorded teardown to a history index
  (zset, lease id by time recorded) and keep the index for the retention after its newest entry.
  Trimming is batched: only once the index holds more than max + max/64 entries (at least 1 more)
  are the entries older than the retention and all but the newest `max` removed — so a record costs
  ZADD + ZCARD + PEXPIRE and the index never holds more than max + max/64 entries. Readers
  (list-teardowns) skip entries older than the retention by score, so what they answer does not
  depend on when the last trim ran.
]]
local function indexTeardown(key, leaseId, now, retentionMs, max)
  redis.call('ZADD', key, now, leaseId)
  if redis.call('ZCARD', key) > max + math.max(1, math.floor(max / 64)) then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - retentionMs))
    redis.call('ZREMRANGEBYRANK', key, 0, -(max + 1))
  end
  redis.call('PEXPIRE', key, retentionMs)
end
