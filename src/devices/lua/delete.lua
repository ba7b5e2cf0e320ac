--[[
  delete: remove a device record and its id from the index.

  KEYS[1]  record key
  KEYS[2]  index set of device ids
  KEYS[3]  the device's baseline key (removed with the record)

  ARGV[1]  device id

  Returns: the number of records deleted (0 or 1).
]]
local n = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[3])
redis.call('SREM', KEYS[2], ARGV[1])
return n
