--[[
  compare-and-set: write a record's new JSON only when the stored JSON is still byte-identical to
  what the caller read (optimistic update without WATCH; the caller re-reads and retries on 0).

  KEYS[1]  record key

  ARGV[1]  the JSON the caller read
  ARGV[2]  the new JSON

  Returns: 1 when written; 0 when the stored JSON changed meanwhile; -1 when the record is gone
  (an update never resurrects a deleted record).
]]
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
