--[[
  claim-deferred: claim a deferred teardown before running it (it stays in the store until its
  teardown is recorded, so a crash of the claimant loses nothing: the claim goes stale and another
  pass re-takes it).

  KEYS[1]  deferred hash (leaseId -> deferred teardown JSON)
  KEYS[2]  claims hash (leaseId -> "<claimedAt ms>:<claimant>")

  ARGV[1]  lease id
  ARGV[2]  now (ms)
  ARGV[3]  stale after (ms)
  ARGV[4]  claimant (node name)
  ARGV[5]  retention ms of the claims hash

  Returns: 1 when claimed by this caller, else 0 (nothing deferred, or a live claim of another).
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held then
  local at = tonumber(string.match(held, '^(%d+):'))
  if at and tonumber(ARGV[2]) - at < tonumber(ARGV[3]) then return 0 end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
