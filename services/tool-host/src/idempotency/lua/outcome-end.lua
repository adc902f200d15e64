-- Keeps a tool call's outcome under its Idempotency-Key and releases its lease, if still held.
-- KEYS: record, lease.
-- ARGV: token, outcomeJSON, ttlSeconds, tool, argsHash.
-- Returns 1.
redis.call('HSET', KEYS[1], 'tool', ARGV[4], 'args', ARGV[5], 'outcome', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
