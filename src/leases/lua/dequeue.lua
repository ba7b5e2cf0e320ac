--[[
  dequeue: leave a selector's FIFO queue (wait ended, client gone). Idempotent.

  KEYS[1]  queue zset
  KEYS[2]  queue deadline hash
  KEYS[3]  set of queue keys that have waiters
  KEYS[4]  waiter description hash (waiterId -> JSON): the waiter's entry goes with it

  ARGV[1]  waiterId
  ARGV[2]  queueKey (member of KEYS[3])

  Returns: 1 when the waiter was queued, else 0.
]]
--- @include "includes/remove-waiter"
--- @include "includes/drop-empty-queue"

local removed = removeWaiter(KEYS[1], KEYS[2], KEYS[4], ARGV[1])
dropEmptyQueue(KEYS[1], KEYS[2], KEYS[3], ARGV[2])
return removed
