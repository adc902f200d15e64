-- BullMQ's own step that adds a job (inserted as ADD, its installed text), behind a guard: the job
-- is added only while the activation that submits it still holds its parent (guarded-add.ts).
-- With ARGV[6] = '1' the submitting runner takes the job itself in the next step of the same write
-- (a trailing take, trailing-takes.ts): when the job is the only one waiting, the queue's marker
-- the add set (KEYS[9]) is taken away again, so no worker wakes to find the queue empty.
-- KEYS: addStandardJob's (KEYS[1] the wait list, KEYS[9] the marker).
-- ARGV: addStandardJob's 1-3, the parent's invocation hash, the activation's epoch, and '1' for a
-- trailing take.
-- Returns GUARD_FENCED when another activation holds the parent, else BullMQ's answer.
--- @const GUARD_FENCED
if ARGV[5] and redis.call('HGET', ARGV[4], 'epoch') ~= ARGV[5] then return GUARD_FENCED end
local meshAdded = (function()
--- @insert ADD
end)()
if ARGV[6] == '1' and redis.call('LLEN', KEYS[1]) == 1 and redis.call('LINDEX', KEYS[1], 0) == meshAdded then
  redis.call('ZREM', KEYS[9], '0')
end
return meshAdded
