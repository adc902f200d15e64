-- PARK: sets `waiting` before an activation parks (or `running` again when it did not need to),
-- under its epoch, so the next activation can tell a park from a crash.
-- KEYS: inv, events.
-- ARGV: epoch, status, nowIso, optionally the id of the job that parks for an approval
-- (`approvalJob`: whoever decides wakes that job; '' for none), and the model call the activation
-- resuming it starts with (`resumeCall`, see activate.lua).
-- Returns 1, or 0 when fenced out.
--- @include "status-event"
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[2] then
  redis.call('HSET', KEYS[1], 'status', ARGV[2])
  statusEvent(KEYS[1], KEYS[2], ARGV[2], ARGV[3])
end
if ARGV[4] and ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'approvalJob', ARGV[4]) end
if ARGV[5] then redis.call('HSET', KEYS[1], 'resumeCall', ARGV[5]) else redis.call('HDEL', KEYS[1], 'resumeCall') end
return 1
