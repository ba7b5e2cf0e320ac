--[[
  list-teardowns: the newest recorded teardowns of one index (every tenant, or one tenant's), each
  with its lease; entries whose record or lease has expired are skipped. Read-only.

  KEYS[1]  teardown index zset (lease id by time recorded)

  ARGV[1]  key base (`<prefix>{leases}:`): records <base>td:<id>, lease hashes <base>lease:<id>
  ARGV[2]  most entries to answer
  ARGV[3]  oldest time (ms) still within the retention

  Returns: an array of {record JSON, lease as includes/lease-fields answers it}.
]]
--- @include "includes/lease-fields"
local out = {}
local limit = tonumber(ARGV[2])
if limit <= 0 then return out end
-- Read a few more than asked: entries whose record or lease expired are skipped.
local ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', ARGV[3], 'LIMIT', 0, limit * 2)
for _, id in ipairs(ids) do
  if #out >= limit then break end
  local record = redis.call('GET', ARGV[1] .. 'td:' .. id)
  local lease = readLease(ARGV[1] .. 'lease:' .. id)
  if record and lease[LF.id] then out[#out + 1] = { record, lease } end
end
return out
