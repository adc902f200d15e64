-- LIST_RECENT: lists a root invocation as recent (unless listed already) and keeps the set
-- bounded, in one step on its one key.
-- KEYS: recent.
-- ARGV: now, id, oldest score kept, rank limit, ttlSeconds.
-- Returns 1.
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return 1
