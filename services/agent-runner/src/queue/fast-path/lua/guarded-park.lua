-- BullMQ's own step that moves a job to wait for its children (inserted as PARK, its installed
-- text), behind the guard of the parent's epoch (guarded-park.ts).
-- KEYS: moveToWaitingChildren's.
-- ARGV: moveToWaitingChildren's 1-5, then the parent's invocation hash and the epoch.
-- Returns GUARD_FENCED when another activation holds the parent, else BullMQ's answer.
--- @const GUARD_FENCED
if redis.call('HGET', ARGV[6], 'epoch') ~= ARGV[7] then return GUARD_FENCED end
--- @insert PARK
