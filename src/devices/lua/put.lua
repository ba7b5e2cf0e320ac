--[[
  put: create or replace a device record and list its id in the index.

  KEYS[1]  record key (string: the DeviceRecord as JSON)
  KEYS[2]  index set of device ids

  ARGV[1]  device id
  ARGV[2]  record JSON

  Returns: 1.
]]
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
