--[[
  readForRelease(leaseKey, token): the lease read once for a release (its fields for the checks and
  for the reply, one HMGET). Returns the lease as `readLease` answers it (includes/lease-fields); or
  a number when it cannot be released: 0 unknown or not active, -3 fencing token mismatch (`token`
  '' skips the check).

  replyReleased(lease, now): that array as the release answers it: state 'released', endedAt now.
]]
--- @include "lease-fields"
local function readForRelease(leaseKey, token)
  local lease = readLease(leaseKey)
  if not lease[LF.id] or lease[LF.state] ~= 'active' then return 0 end
  if token ~= '' and lease[LF.fencingToken] ~= token then return -3 end
  return lease
end

local function replyReleased(lease, now)
  lease[LF.state] = 'released'
  lease[LF.endedAt] = now
end
