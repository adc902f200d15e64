-- Registers a worker as blocked on its queue until its block lapses (Redis's clock), with its
-- offer, written when absent: a Redis that restarted has none (dispatched-takes.ts).
-- KEYS: the queue's blocked set, its offers hash.
-- ARGV: the runner, the block's length in ms, the offer's JSON.
-- Returns 0.
--- @include "redis-now-ms"
redis.call('ZADD', KEYS[1], redisNowMs() + tonumber(ARGV[2]), ARGV[1])
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
return 0
