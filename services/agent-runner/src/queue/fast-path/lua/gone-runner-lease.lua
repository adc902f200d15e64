-- The lease of the one runner that watches for gone runners (gone-runner-steps.ts; a hash: holder,
-- and when it last renewed by Redis's clock, so that no two hosts' clocks are compared): kept by
-- its holder, taken once it went unrenewed for ARGV[2] ms.
-- KEYS: the lease.
-- ARGV: the runner asking, leaseMs.
-- Returns {1} held, {0} not, {1, previous holder, ms since it renewed} taken over from a lapsed
-- holder.
--- @include "redis-now-ms"
local now = redisNowMs()
local holder = redis.call("HGET", KEYS[1], "holder")
local renewed = tonumber(redis.call("HGET", KEYS[1], "renewed") or "0")
if holder and holder ~= ARGV[1] and now - renewed < tonumber(ARGV[2]) then return {0} end
redis.call("HSET", KEYS[1], "holder", ARGV[1], "renewed", now)
redis.call("PEXPIRE", KEYS[1], 60000)
if holder == ARGV[1] or not holder then return {1} end
return {1, holder, now - renewed}
