-- SESSION_ADVANCE: advances a session past its current invocation, once that one is terminal:
-- appends its exchange (none for a failed or cancelled one), and makes the next queued invocation
-- current. Idempotent: it does nothing unless `finishedId` is still current, so whoever notices
-- may run it. The messages keep the newest whole exchanges within maxMessages and maxBytes (their
-- JSON); the meta's `dropped` counts those that went from the head (positions of
-- GET /sessions/{id}'s pages).
-- KEYS: meta, invocations, queue, messages.
-- ARGV: finishedId, now, ttl, maxMessages, forget ('1' = it never existed: drop it from the
-- list), maxBytes, ...exchange messages as JSON.
-- Returns the next invocation id ('' when none waits), or false when `finishedId` was not current
-- (advanced past already, or the session was deleted).
--- @include "touch"
--- @include "bounded-tail"
if redis.call('HGET', KEYS[1], 'current') ~= ARGV[1] then return false end
if #ARGV > 6 then
  for i = 7, #ARGV do redis.call('RPUSH', KEYS[4], ARGV[i]) end
  local before = redis.call('LLEN', KEYS[4])
  redis.call('LTRIM', KEYS[4], -tonumber(ARGV[4]), -1)
  local keep = #boundedTail(KEYS[4], tonumber(ARGV[6]))
  if keep == 0 then
    redis.call('DEL', KEYS[4])
  elseif keep < redis.call('LLEN', KEYS[4]) then
    redis.call('LTRIM', KEYS[4], -keep, -1)
  end
  local dropped = before - redis.call('LLEN', KEYS[4])
  if dropped > 0 then redis.call('HINCRBY', KEYS[1], 'dropped', dropped) end
end
if ARGV[5] == '1' then redis.call('LREM', KEYS[2], 0, ARGV[1]) end
local nxt = redis.call('LPOP', KEYS[3]) or ''
redis.call('HSET', KEYS[1], 'current', nxt, 'currentSince', ARGV[2], 'updatedAt', ARGV[2])
-- The interrupt that waited is current now: none waits to start.
if nxt ~= '' and redis.call('HGET', KEYS[1], 'interrupting') == nxt then
  redis.call('HSET', KEYS[1], 'interrupting', '')
end
touch(tonumber(ARGV[3]))
return nxt
