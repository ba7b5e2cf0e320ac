--[[
  record-teardown: store what a lease's teardown did and free its device (unless the lease is
  somehow still active, or the device already moved on to another lease).

  KEYS[1]  teardown record key (string, JSON)
  KEYS[2]  device hash (fields: lease, pending, fence)
  KEYS[3]  lease hash

  ARGV[1]  record JSON
  ARGV[2]  lease id
  ARGV[3]  retention ms of the record

  Returns: 1 when the device was freed, else 0.
]]
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
if redis.call('HGET', KEYS[3], 'state') == 'active' then return 0 end
if redis.call('HGET', KEYS[2], 'lease') ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], 'lease', 'pending')
return 1
