-- SUBMIT_CHILD: submits a delegation: records the parent's sub-agent call `started` with its child
-- id and creates the child invocation, in one step.
-- KEYS: parent inv, parent calls, child inv, events.
-- ARGV: epoch, callId, recordJSON, eventJSON, ...child hash fields.
-- Returns 1 (submitted), 2 (child existed already: a re-run), or 0 (fenced out).
--- @const EVENT_STREAM_MAXLEN
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
local existing = redis.call('HGET', KEYS[2], ARGV[2])
-- An approved delegation (docs/guides/approvals-and-budgets.md) is submitted now: its record becomes started.
if not existing or string.find(existing, '"status":"approved"', 1, true) then redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) end
if redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
redis.call('HSET', KEYS[3], unpack(ARGV, 5))
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then redis.call('HSET', KEYS[3], 'cancelRequested', '1') end
if ARGV[4] ~= '' then redis.call('XADD', KEYS[4], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', ARGV[4]) end
return 1
