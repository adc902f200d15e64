-- Before BullMQ's own stalled check (inserted as STALLED_CHECK, its installed text): the jobs in
-- the queue's active list that the gone runner took (BullMQ keeps the taking worker's name in a
-- job's `pb`, written in the step that sets its lock) lose their lock and join the stalled set, and
-- the check's throttle key goes, so the check that follows moves them back to wait now, exactly as
-- it would once their locks had lapsed: stalled count, failure past maxStalledCount, marker and
-- `stalled` event are BullMQ's. When the runner holds none, BullMQ's check does not run.
-- KEYS: moveStalledJobsToWait's (stalled, wait, active, stalled-check, ...).
-- ARGV: moveStalledJobsToWait's 1-4 (ARGV[2] the queue's key), then the gone runner's name.
-- Returns the ids of the jobs moved back to wait.
--- @const LOCK_SUFFIX
local meshGone = ARGV[5]
local meshFound = 0
for _, meshJobId in ipairs(redis.call("LRANGE", KEYS[3], 0, -1)) do
  local meshJobKey = ARGV[2] .. meshJobId
  if redis.call("HGET", meshJobKey, "pb") == meshGone then
    redis.call("DEL", meshJobKey .. LOCK_SUFFIX)
    redis.call("SADD", KEYS[1], meshJobId)
    meshFound = meshFound + 1
  end
end
if meshFound == 0 then return {} end
redis.call("DEL", KEYS[4])
--- @insert STALLED_CHECK
