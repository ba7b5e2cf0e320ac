--[[
  delete: remove a device record and its id from the index.

  KEYS[1]  record key
  KEYS[2]  index set of device ids

  ARGV[1]  device id

  Returns: the number of records deleted (0 or 1).
]]
local n = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return n
