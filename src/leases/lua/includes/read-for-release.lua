--[[
  readForRelease(leaseKey, token): the lease read once for a release (its fields for the checks and
  for the reply, not EXISTS + HMGET + HGETALL). Returns HGETALL's flat field/value array and the
  index of each field name in it; or a number when it cannot be released: 0 unknown or not active,
  -3 fencing token mismatch (`token` '' skips the check).

  replyReleased(all, f, now): the array as the release answers it: state 'released', endedAt now.
]]
local function readForRelease(leaseKey, token)
  local all = redis.call('HGETALL', leaseKey)
  if #all == 0 then return 0 end
  local f = {}
  for i = 1, #all, 2 do f[all[i]] = i end
  if all[f.state + 1] ~= 'active' then return 0 end
  if token ~= '' and all[f.fencingToken + 1] ~= token then return -3 end
  return all, f
end

local function replyReleased(all, f, now)
  all[f.state + 1] = 'released'
  if f.endedAt then
    all[f.endedAt + 1] = now
  else
    all[#all + 1] = 'endedAt'
    all[#all + 1] = now
  end
end
