--[[
  indexTeardown(key, leaseId, now, retentionMs, max): add a recorded teardown to a history index
  (zset, lease id by time recorded) and keep the index for the retention after its newest entry.
  Trimming is batched: only once the index holds more than max + max/64 entries (at least 1 more)
  are the entries older than the retention and all but the newest `max` removed — so a record costs
  ZADD + ZCARD + PEXPIRE and the index never holds more than max + max/64 entries. Readers
  (list-teardowns) skip entries older than the retention by score, so what they answer does not
  depend on when the last trim ran. `now` and `retentionMs` are the scripts' ARGV text (ms), handed to
  Redis as they came: a Lua number is formatted through printf on every redis.call (measured:
  printf/strtod were 3-4 % of Redis' instructions per lease cycle); `max` is a number.
]]
local function indexTeardown(key, leaseId, now, retentionMs, max)
  redis.call('ZADD', key, now, leaseId)
  if redis.call('ZCARD', key) > max + math.max(1, math.floor(max / 64)) then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (tonumber(now) - tonumber(retentionMs)))
    redis.call('ZREMRANGEBYRANK', key, 0, -(max + 1))
  end
  redis.call('PEXPIRE', key, retentionMs)
end
