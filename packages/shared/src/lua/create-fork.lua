-- CREATE_FORK: creates a fork (docs/guides/durability.md) unless it exists: its state, the call
-- records it reuses, the tree texts they refer to (copied into the fork's own tree: a tree never
-- refers to another's), and its first events (the reused calls, then its `queued` status), in one
-- step on the fork's own tree. Every key gets the TTL (deadline + retention) as a new root's does;
-- finish sets the retention once it ends.
-- KEYS: inv, calls, events, texts.
-- ARGV: ttlSeconds, n records, n x (callId, recordJSON), m events, m x eventJSON, the texts (their
-- count, then ref, text pairs: storeTexts), ...hash fields.
-- Returns 1 when created, 0 when it already existed.
--- @include "store-texts"
--- @const EVENT_STREAM_MAXLEN
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local ttl = tonumber(ARGV[1])
-- HSET in slices: unpack() of thousands of arguments overflows Lua's stack.
local function hsetSlices(key, from, to)
  for i = from, to, 1000 do
    redis.call('HSET', key, unpack(ARGV, i, math.min(i + 999, to)))
  end
end
local n = tonumber(ARGV[2])
local at = 3 + 2 * n
if n > 0 then
  hsetSlices(KEYS[2], 3, at - 1)
  redis.call('EXPIRE', KEYS[2], ttl)
end
local m = tonumber(ARGV[at])
for i = at + 1, at + m do
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', EVENT_STREAM_MAXLEN, '*', 'e', ARGV[i])
end
if m > 0 then redis.call('EXPIRE', KEYS[3], ttl) end
hsetSlices(KEYS[1], storeTexts(KEYS[4], KEYS[1], ARGV, at + m + 1), #ARGV)
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[4], ttl)
return 1
