-- listRecent(recent, now, id, oldest, limit, ttlSeconds): lists a root invocation as recent (unless
-- listed already: a rejoined one keeps its place) and keeps the set bounded: entries scored before
-- `oldest` go (their invocations have expired), at most `limit` stay, and the set expires
-- `ttlSeconds` after the last listing.
local function listRecent(recent, now, id, oldest, limit, ttl)
  redis.call('ZADD', recent, 'NX', now, id)
  redis.call('ZREMRANGEBYSCORE', recent, '-inf', '(' .. oldest)
  redis.call('ZREMRANGEBYRANK', recent, 0, -(tonumber(limit) + 1))
  redis.call('EXPIRE', recent, tonumber(ttl))
end
