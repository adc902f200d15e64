-- BullMQ's add of a standard job (inserted as ADD, its last line `return jobId` cut), its answer
-- going through `meshDispatchJob(jobId)` (dispatch.ts): the job just added is dispatched to a
-- worker that blocks on the queue, if one does. The take runs here, in the add, exactly as that
-- worker's own take would (inserted as TAKE: the take step with its token, lock and name, and the
-- activation of the job's invocation), and its answer goes to the worker's inbox, which its block
-- also watches: the worker wakes holding the job instead of waking on the marker to take it. The
-- marker the add set goes when no other job waits, so no other worker wakes for nothing. The add's
-- answer is BullMQ's. A worker registers before it blocks, for as long as the block lasts, by
-- Redis's clock, and leaves the set when its block ends; the worker picked leaves it here.
-- KEYS: BullMQ's addStandardJob's (KEYS[1] the wait list, KEYS[9] the marker).
-- ARGV: BullMQ's, then DISPATCH_MARK and JSON {now, nowIso, token}.
--- @include "redis-now-ms"
--- @include "marked-settings"
--- @const DISPATCH_MARK
--- @const INBOX_TTL_MS
--- @const MOVE_TO_ACTIVE_KEYS
--- @const BLOCKED_SUFFIX
--- @const OFFERS_SUFFIX
local function meshBullTake(KEYS, ARGV)
--- @insert TAKE
end
local meshDispatch = markedSettings(ARGV, DISPATCH_MARK)
local function meshDispatchJob(jobId)
  if not meshDispatch or type(jobId) ~= 'string' then return jobId end
  local queueKey = string.sub(KEYS[1], 1, -5)
  local blocked = queueKey .. BLOCKED_SUFFIX
  redis.call('ZREMRANGEBYSCORE', blocked, '-inf', redisNowMs())
  local first = redis.call('ZRANGE', blocked, 0, 0, 'WITHSCORES')
  local picked = first[1]
  if not picked then return jobId end
  redis.call('ZREM', blocked, picked)
  local ok, offer = pcall(cjson.decode, redis.call('HGET', queueKey .. OFFERS_SUFFIX, picked) or 'null')
  if not ok or type(offer) ~= 'table' then return jobId end
  local keys = {}
  for i, suffix in ipairs(MOVE_TO_ACTIVE_KEYS) do keys[i] = queueKey .. suffix end
  local token = offer.name .. ':d:' .. meshDispatch.token
  local opts = cmsgpack.pack({token = token, lockDuration = offer.lockDuration, name = offer.name})
  local settings = offer.head .. meshDispatch.now .. '","nowIso":"' .. meshDispatch.nowIso .. '","only":' .. cjson.encode(jobId) .. '}'
  local reply = meshBullTake(keys, {queueKey, meshDispatch.now, opts, settings})
  if type(reply) ~= 'table' or reply[2] ~= jobId then
    -- Not taken (the queue paused, or another job first): the worker still blocks, as registered.
    redis.call('ZADD', blocked, first[2], picked)
    return jobId
  end
  -- keys[3]: the queue's prioritized set (MOVE_TO_ACTIVE_KEYS).
  if redis.call('LLEN', KEYS[1]) == 0 and redis.call('ZCARD', keys[3]) == 0 then
    redis.call('ZREM', KEYS[9], '0')
  end
  redis.call('ZADD', offer.inbox, 0, cmsgpack.pack({token, reply}))
  redis.call('PEXPIRE', offer.inbox, INBOX_TTL_MS)
  return jobId
end
--- @insert ADD
return meshDispatchJob(jobId)
