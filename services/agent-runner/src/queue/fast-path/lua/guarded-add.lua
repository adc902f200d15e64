-- BullMQ's own step that adds a job (inserted as ADD, its installed text), behind a guard: the job
-- is added only while the activation that submits it still holds its parent (guarded-add.ts).
-- KEYS: addStandardJob's.
-- ARGV: addStandardJob's 1-3, the parent's invocation hash, the activation's epoch.
-- Returns GUARD_FENCED when another activation holds the parent, else BullMQ's answer.
--- @const GUARD_FENCED
if ARGV[5] and redis.call('HGET', ARGV[4], 'epoch') ~= ARGV[5] then return GUARD_FENCED end
--- @insert ADD
