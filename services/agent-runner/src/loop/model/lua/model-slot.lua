-- Takes one of a model's `maxConcurrency` slots (concurrency-limited-model.ts): slots whose lease
-- lapsed are dropped first, so a runner that died frees its slots.
-- KEYS: slots (sorted set: token -> lease expiry ms).
-- ARGV: token, now, leaseMs, max.
-- Returns 1 when taken, 0 when every slot is held.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
return 1
