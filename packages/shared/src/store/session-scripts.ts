import type { LuaScript } from './lua-scripts.js';

// The Lua steps of sessions (docs/guides/sessions.md). Each touches the four keys of one session, which share
// the session's own hash tag: never an invocation's keys (those carry their tree's tag).

// Slides the TTL of every key of the session (KEYS[1..4]) to ARGV[ttlIndex] seconds.
const TOUCH = `
local function touch(ttl)
  for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ttl) end
end
`;

// The newest whole exchanges (user + answer pairs) of the message list `key` whose JSON fits in
// `maxBytes`, oldest first, and how many they are. It reads an element at a time from the newest,
// so a list stored before the byte bound (108 MB once) is never read whole: reading it so blocked
// Redis for everyone.
const BOUNDED_TAIL = `
local function boundedTail(key, maxBytes)
  local n = redis.call('LLEN', key)
  local picked, total, i = {}, 0, 1
  while i + 1 <= n do
    local answer = redis.call('LINDEX', key, -i)
    local user = redis.call('LINDEX', key, -(i + 1))
    if total + #answer + #user > maxBytes then break end
    total = total + #answer + #user
    table.insert(picked, answer)
    table.insert(picked, user)
    i = i + 2
  end
  local out = {}
  for k = #picked, 1, -1 do table.insert(out, picked[k]) end
  return out
end
`;

/**
 * Binds a new invocation to a session, creating the session on first use. KEYS: meta,
 * invocations, queue, messages. ARGV: sessionId, agent, owner ('' = none), anyOwner ('1' = the
 * caller sees every session: auth is off), invocationId, multitask, now, ttl, maxInvocations,
 * maxQueued, historyBytes. Returns {'not_found'} (another key's), {'conflict', agent}, {'busy',
 * current} (reject), {'full', current}, {'start', ...messagesJson} (nothing runs: the invocation
 * is now the session's current one; its history, the newest exchanges within historyBytes),
 * {'enqueue', current} (it waits at the end of the queue) or
 * {'interrupt', current, superseded} (it waits at the queue's head). Only the newest interrupt
 * waits to start: the meta's `interrupting` names it, and one bound while another still waits
 * supersedes it (`superseded`, '' when none: the caller cancels it as it cancels `current`), so
 * interrupts bound at once end the same whatever the timing: the last bound runs, every earlier
 * one ends cancelled. A retried bind of an invocation still queued answers {'queued', current}.
 */
export const SESSION_CLAIM: LuaScript = {
  numberOfKeys: 4,
  lua: `${TOUCH}${BOUNDED_TAIL}
local current = ''
if redis.call('EXISTS', KEYS[1]) == 1 then
  local h = redis.call('HMGET', KEYS[1], 'owner', 'agent', 'current')
  if ARGV[4] ~= '1' and (h[1] or '') ~= ARGV[3] then return {'not_found'} end
  if h[2] ~= ARGV[2] then return {'conflict', h[2]} end
  current = h[3] or ''
else
  redis.call('HSET', KEYS[1], 'v', '1', 'id', ARGV[1], 'agent', ARGV[2], 'owner', ARGV[3],
    'createdAt', ARGV[7], 'updatedAt', ARGV[7], 'current', '')
end
local inv = ARGV[5]
local result
if current == inv then
  result = {'start'}
elseif redis.call('LPOS', KEYS[3], inv) then
  result = {'queued', current}
elseif current == '' then
  redis.call('HSET', KEYS[1], 'current', inv, 'currentSince', ARGV[7])
  redis.call('RPUSH', KEYS[2], inv)
  result = {'start'}
elseif ARGV[6] == 'reject' then
  return {'busy', current}
elseif redis.call('LLEN', KEYS[3]) >= tonumber(ARGV[10]) then
  return {'full', current}
else
  if ARGV[6] == 'interrupt' then
    result = {'interrupt', current, redis.call('HGET', KEYS[1], 'interrupting') or ''}
    redis.call('LPUSH', KEYS[3], inv)
    redis.call('HSET', KEYS[1], 'interrupting', inv)
  else
    redis.call('RPUSH', KEYS[3], inv)
    result = {'enqueue', current}
  end
  redis.call('RPUSH', KEYS[2], inv)
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[9]), -1)
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[7])
touch(tonumber(ARGV[8]))
if result[1] == 'start' then
  for _, m in ipairs(boundedTail(KEYS[4], tonumber(ARGV[11]))) do table.insert(result, m) end
end
return result`,
};

/**
 * Advances a session past its current invocation, once that one is terminal: appends its exchange
 * (none for a failed or cancelled one), and makes the next queued invocation current. Idempotent:
 * it does nothing unless `finishedId` is still current, so whoever notices may run it. KEYS: meta,
 * invocations, queue, messages. ARGV: finishedId, now, ttl, maxMessages, forget ('1' = it never
 * existed: drop it from the list), maxBytes, ...exchange messages as JSON. The messages keep the
 * newest whole exchanges within maxMessages and maxBytes (their JSON); the meta's `dropped` counts
 * those that went from the head (positions of GET /sessions/{id}'s pages). Returns the next
 * invocation id ('' when none waits), or false when `finishedId` was not current (advanced
 * past already, or the session was deleted).
 */
export const SESSION_ADVANCE: LuaScript = {
  numberOfKeys: 4,
  lua: `${TOUCH}${BOUNDED_TAIL}
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
return nxt`,
};

/**
 * Deletes a session: its binding, history and lists. KEYS: meta, invocations, queue, messages.
 * ARGV: createdAt (only the session that was read goes; one created again since stays). Returns
 * the ids that were still waiting in its queue (the caller cancels them), or false when the
 * session is gone or another.
 */
export const SESSION_DELETE: LuaScript = {
  numberOfKeys: 4,
  lua: `
if redis.call('HGET', KEYS[1], 'createdAt') ~= ARGV[1] then return false end
local waiting = redis.call('LRANGE', KEYS[3], 0, -1)
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return waiting`,
};

/**
 * The history a session's next invocation sees: the newest whole exchanges within ARGV[1] bytes,
 * oldest first (never the whole list: see boundedTail). KEYS: messages.
 */
export const SESSION_HISTORY: LuaScript = {
  numberOfKeys: 1,
  lua: `${BOUNDED_TAIL}
return boundedTail(KEYS[1], tonumber(ARGV[1]))`,
};

/**
 * One page of a session's messages, oldest first (GET /sessions/{id}). KEYS: meta, messages. ARGV:
 * from (the position of its first message: positions count every message the session ever kept,
 * those dropped from the head included), limit, maxBytes (a page stops before the message that
 * would pass it, but holds at least one). Returns {dropped, length, first, ...messagesJson}: the
 * position of the head, the list's length, and the position of the page's first message (the
 * head when `from` has been dropped since).
 */
export const SESSION_PAGE: LuaScript = {
  numberOfKeys: 2,
  lua: `
local dropped = tonumber(redis.call('HGET', KEYS[1], 'dropped') or '0')
local len = redis.call('LLEN', KEYS[2])
local first = math.max(tonumber(ARGV[1]), dropped)
local index, total, page = first - dropped, 0, {}
while index < len and #page < tonumber(ARGV[2]) do
  local m = redis.call('LINDEX', KEYS[2], index)
  if #page > 0 and total + #m > tonumber(ARGV[3]) then break end
  total = total + #m
  table.insert(page, m)
  index = index + 1
end
local result = {dropped, len, first}
for _, m in ipairs(page) do table.insert(result, m) end
return result`,
};
