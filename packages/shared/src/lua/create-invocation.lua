-- CREATE_INVOCATION: creates a root invocation unless it exists. Both keys get the TTL (deadline +
-- retention): one orphaned in `queued` (never enqueued) expires; finish sets the retention TTL
-- once it ends.
-- KEYS: inv, events.
-- ARGV: eventJSON, ttlSeconds, ...hash fields.
-- Returns 1 when created, 0 when it already existed.
--- @const EVENT_STREAM_MAXLEN
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
if ARGV[1] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', ARGV[1])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
end
return 1
