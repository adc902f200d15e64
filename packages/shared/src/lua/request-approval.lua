-- REQUEST_APPROVAL: asks for a call's approval (docs/guides/approvals-and-budgets.md): records the
-- call (`awaiting_approval`) unless it has a record, and its request in the invocation's hash with
-- the `approval_requested` event, once (`approvalsPending` counts the undecided ones, so a sweep
-- reads one field).
-- KEYS: inv, calls, events.
-- ARGV: epoch, callId, recordJSON, requestJSON, eventJSON.
-- Returns 1, 0 when fenced out, or 2 when the invocation is flagged cancelled.
--- @const EVENT_STREAM_MAXLEN
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'cancelRequested') == '1' then return 2 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) end
if redis.call('HSETNX', KEYS[1], 'approval:' .. ARGV[2], ARGV[4]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'approvalsPending', 1)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', ARGV[5])
end
return 1
