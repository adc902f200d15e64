-- CREATE_INVOCATION: creates a root invocation unless it exists. Both keys get the TTL (deadline +
-- retention): one orphaned in `queued` (never enqueued) expires; finish sets the retention TTL
-- once it ends. Given the `recent` set as a third key, it lists the root there too, as
-- list-recent.lua does (whether or not it was created: a rejoined one keeps its place), one step
-- instead of two; the keys are then on different slots, which only one Redis server allows (on a
-- cluster the gateway lists it apart).
-- KEYS: inv, events[, recent]: the caller passes their count first.
-- ARGV: eventJSON, ttlSeconds, the listing (now, id, oldest score kept, rank limit, its ttlSeconds;
-- five '' without the recent key), ...hash fields.
-- Returns 1 when created, 0 when it already existed.
--- @include "recent-listing"
--- @const EVENT_STREAM_MAXLEN
if KEYS[3] then listRecent(KEYS[3], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]) end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 8))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
if ARGV[1] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', ARGV[1])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
end
return 1
