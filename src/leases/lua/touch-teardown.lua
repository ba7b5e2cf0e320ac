--[[
  touch-teardown: refresh the stamp of a due teardown while it runs, so that claim-stalled does not
  hand it to another node (a long device reset is not a stalled one).

  KEYS[1]  teardowns-due zset (member lease id, score: stamp time ms)
  KEYS[2]  the lease hash (field `teardownBy`: the stamp's claimant)

  ARGV[1]  lease id
  ARGV[2]  now (ms)
  ARGV[3]  claimant

  Returns: 1 when the teardown was due (re-stamped (now, claimant)), else 0 (recorded, or never
  ended: nothing changed).
]]
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], 'teardownBy', ARGV[3])
return 1
